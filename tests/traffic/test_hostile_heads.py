"""Heads proxy and serve would not themselves read one way (issue #34): a field name with
``_`` (``Transfer_Encoding: chunked`` passed on while the body is framed by length), a value
with a control character or with whitespace around it that is not SP or HTAB (``\\x0b``,
NBSP: ``str.strip()`` takes them, RFC 9112 OWS does not), and ``CONNECT`` (RFC 9110 §9.3.6:
501, not 400)."""

from __future__ import annotations

import math
import socket
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.serve import SSEServer

from ..support import turns

TIMEOUT = 20
BODY = b'{"a": 1}'
REFUSED = {
    "underscore transfer-encoding": (b"POST /v1 HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n"
                                     b"Transfer_Encoding: chunked\r\n\r\n" + BODY, 400),
    "underscore name": b"GET /v1 HTTP/1.1\r\nHost: x\r\nX_Api_Key: k\r\n\r\n",
    "vertical tab in a value": b"GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: a\x0bb\r\n\r\n",
    "vertical tab around a value": b"GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: \x0bab\r\n\r\n",
    "nbsp around a value": b"GET /v1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\xa0\r\n\r\n",
    "form feed around a value": b"GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: ab\x0c\r\n\r\n",
    "connect": (b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
                501),
}


def _status(base: str, raw: bytes) -> tuple[int, bytes]:
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as s:
        s.sendall(raw)
        got = b""
        while chunk := s.recv(65536):  # refused: the connection closes after the answer
            got += chunk
    return int(got.split(b" ", 2)[1]), got


@pytest.fixture(params=["serve", "proxy"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    upstream = SSEServer(turns.anthropic(text=["Hi"]), speed=math.inf)
    with upstream:
        front: AbstractContextManager = (upstream if request.param == "serve"
                                         else RecordingProxy(upstream.base_url, tmp_path))
        if front is upstream:
            yield upstream.base_url
        else:
            with front as proxy:
                yield proxy.base_url  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", REFUSED)
def test_a_head_that_cannot_be_read_one_way_is_refused(case: str, server: str) -> None:
    raw, want = REFUSED[case] if isinstance(REFUSED[case], tuple) else (REFUSED[case], 400)
    status, _ = _status(server, raw)  # type: ignore[arg-type]
    assert status == want


def test_nbsp_inside_a_value_is_obs_text_and_read(server: str) -> None:
    status, _ = _status(server, b"GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: a\xa0b\r\n"
                                b"Connection: close\r\n\r\n")
    assert status == 200
