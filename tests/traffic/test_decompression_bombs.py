"""Decompression bombs (issue #22): the proxy and record inflate a body no further than
import does (one limit, streamcalls_lab._inflate), keep it that far, mark the capture
cut off so it loads with an error row saying so, and never hold the inflated body whole."""

from __future__ import annotations

import gzip
import http.client
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamcalls_lab import _inflate as inflate
from streamcalls_lab import load, provenance
from streamcalls_lab._inflate import Inflater
from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.record import RecordError, record
from streamcalls_lab.traffic.server import LoopbackServer

from ..support.stream_handler import StreamHandler

LIMIT = 1024**2
BOMB = gzip.compress(b"data: " + b"0" * (16 * LIMIT) + b"\n\n")


class _Bomb(StreamHandler):
    def answer(self) -> None:
        self.stream(BOMB, content_encoding="gzip")


@pytest.fixture
def bomb(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(inflate, "MAX_INFLATED", LIMIT)
    with LoopbackServer(_Bomb, "127.0.0.1", 0) as server:
        yield server.base_url


def _marked(capture: Path) -> None:
    assert capture.stat().st_size == LIMIT
    assert "expands past 1048576 bytes" in (provenance.read(capture) or {})["cut_off"]
    problems = load(capture, strict=False)["problem"].dropna()
    assert problems.str.contains("expands past 1048576 bytes").any()


def test_the_proxy_passes_a_bomb_on_as_sent_and_keeps_it_only_up_to_the_limit(
    bomb: str, tmp_path: Path,
) -> None:
    with RecordingProxy(bomb, tmp_path) as proxy:
        host, port = proxy.base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=20)
        conn.request("POST", "/v1/messages", body=b"{}")
        assert conn.getresponse().read() == BOMB  # the client decodes it, as it would
        conn.close()
    (capture,) = tmp_path.glob("*.sse")
    _marked(capture)


def test_record_keeps_a_bomb_up_to_the_limit_and_fails(bomb: str, tmp_path: Path) -> None:
    out = tmp_path / "x.sse"
    with pytest.raises(RecordError, match="expands past"):
        record(bomb + "/v1/messages", b"{}", out, key_env=None)
    _marked(out)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_inflating_gives_bounded_pieces_however_much_one_read_expands(encoding: str) -> None:
    z = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
    wire = z.compress(b"\0" * (64 * LIMIT)) + z.flush()
    pieces = list(Inflater(encoding, limit=8 * LIMIT).feed(wire))
    assert max(len(p) for p in pieces) <= inflate.PIECE
    assert sum(len(p) for p in pieces) == 8 * LIMIT
