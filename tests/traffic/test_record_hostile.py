"""record on a broken compressed body: a clear error, never a traceback or an empty
capture, and a partial capture marked so that load() reports it."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from streamcalls_lab import load, provenance
from streamcalls_lab.traffic.record import RecordError, record

from ..support import turns

BODY = turns.anthropic(text=["Hello there"] * 40, calls=[("lookup", ['{"city": "Paris"}'])])


@pytest.fixture
def answer() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server that answers every POST with ``content-encoding: gzip`` and the
    bytes the test puts in the list (as they are: corrupt or cut)."""
    sent: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(sent[0])))
            self.end_headers()
            self.wfile.write(sent[0])

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/messages", sent
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def record_answer(
    answer: tuple[str, list[bytes]], tmp_path: Path,
) -> Callable[..., Path]:
    """Records, into ``x.sse``, the server answering with ``body``; gives back that path
    (which may not exist). ``query`` is added to the URL."""
    url, sent = answer

    def run(body: bytes, query: str = "") -> Path:
        sent.append(body)
        out = tmp_path / "x.sse"
        record(url + query, {"stream": True}, out, key_env=None)
        return out

    return run


def test_a_corrupt_gzip_body_is_a_record_error_and_leaves_no_empty_capture(
    record_answer: Callable[..., Path], tmp_path: Path,
) -> None:
    with pytest.raises(RecordError, match="corrupt gzip body"):
        record_answer(b"\x1f\x8b\x08\x00garbage-not-deflate" * 4)
    assert not (tmp_path / "x.sse").exists()


def test_a_gzip_body_cut_in_half_is_reported_and_marked_cut_off(
    record_answer: Callable[..., Path], tmp_path: Path,
) -> None:
    packed = gzip.compress(BODY)
    with pytest.raises(RecordError, match="broke off"):
        record_answer(packed[: len(packed) // 2])
    saved = (tmp_path / "x.sse").read_bytes()
    assert saved and BODY.startswith(saved)
    assert "ended before its end" in (provenance.read(tmp_path / "x.sse") or {})["cut_off"]
    problems = load(tmp_path / "x.sse", strict=False).problem.dropna()
    assert problems.str.contains("broke off").any()


def test_a_whole_gzip_body_is_saved_unmarked(record_answer: Callable[..., Path]) -> None:
    path = record_answer(gzip.compress(BODY))
    assert path.read_bytes() == BODY
    assert "cut_off" not in (provenance.read(path) or {})


def test_a_body_that_echoes_the_key_is_a_record_error_and_nothing_is_saved(
    record_answer: Callable[..., Path], tmp_path: Path,
) -> None:
    key = "AIzaRecordHostile-7c1e"
    with pytest.raises(RecordError, match="credential") as err:
        record_answer(gzip.compress(BODY + f'data: {{"error": "bad key {key}"}}\n\n'.encode()),
                      f"?key={key}")
    assert key not in str(err.value)
    assert list(tmp_path.iterdir()) == []
