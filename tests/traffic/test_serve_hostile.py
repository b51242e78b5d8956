"""serve under hostile and crowded clients: bad sizes answered, idle clients let go, keys
never logged, nothing outside a served folder, 200 concurrent clients all served."""

from __future__ import annotations

import base64
import http.client
import math
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from streamcalls_lab import echoes
from streamcalls_lab.traffic.serve import SSEServer

from ..support import turns

BODY = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"q"', ': "x"}'])])
KEY = "sk-Zq9-query-secret"


def _raw(server: SSEServer, request: bytes, timeout: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(request)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


@pytest.mark.parametrize("length, status", [
    (b"abc", b"400"), (b"-1", b"400"), (b"1, 2", b"400"), (b"99999999999", b"413"),
])
def test_a_bad_content_length_is_answered_not_dropped_or_waited_on(
    length: bytes, status: bytes, capfd: pytest.CaptureFixture[str],
) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        answer = _raw(server, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: "
                      + length + b"\r\n\r\n{}")
    assert answer.startswith(b"HTTP/1.1 " + status)
    assert "Traceback" not in capfd.readouterr().err


def test_an_idle_client_is_let_go_after_the_timeout() -> None:
    with SSEServer(BODY, speed=math.inf, idle_timeout=0.3) as server:
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            assert sock.recv(10) == b""  # the server closed it; nothing was ever sent
        assert time.monotonic() - started < 5


def test_a_client_that_stops_mid_body_is_let_go_too() -> None:
    with (SSEServer(BODY, speed=math.inf, idle_timeout=0.3) as server,
          socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock):
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        assert sock.recv(10) == b""


def test_a_query_key_and_a_body_key_never_reach_the_request_log() -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", f"/v1beta/models/m:stream?alt=sse&key={KEY}",
                     body=f'{{"api_key": "{KEY}-body"}}')
        conn.getresponse().read()
        conn.close()
        log = repr(list(server.requests))
    assert KEY not in log and "alt=sse" in log


@pytest.mark.parametrize("spell", [
    lambda k: "".join(f"\\u{ord(c):04x}" for c in k),  # every character a JSON escape
    lambda k: "".join(f"\\u{ord(c):04X}" if i % 2 else c for i, c in enumerate(k)),  # a mix
    lambda k: base64.b64encode(b"ab" + k.encode()).decode(),  # inside a longer base64 blob
], ids=["escaped", "mixed", "base64"])
def test_a_header_key_spelled_otherwise_in_the_body_never_reaches_the_request_log(
    spell: Callable[[str], str],
) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/v1/messages", headers={"x-api-key": KEY},
                     body=f'{{"messages": [{{"content": "{spell(KEY)}"}}]}}')
        conn.getresponse().read()
        conn.close()
        (request,) = server.requests
    assert echoes.find(request.body, [KEY]) is None and b"messages" in request.body


def test_only_the_last_requests_are_kept() -> None:
    with SSEServer(BODY, speed=math.inf, max_requests=3) as server:
        for _ in range(5):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request("POST", "/", body=b"x" * 1000)
            conn.getresponse().read()
            conn.close()
        assert len(server.requests) == 3


def test_a_symlink_out_of_the_served_folder_is_not_served(tmp_path: Path) -> None:
    (tmp_path / "outside.sse").write_bytes(b"data: private\n\n")
    root = tmp_path / "served"
    root.mkdir()
    (root / "a.sse").write_bytes(BODY)
    (root / "leak.sse").symlink_to(tmp_path / "outside.sse")
    with SSEServer(root, speed=math.inf) as server:
        assert server.names == ["a"]
        assert any("leak" in s and "outside" in s for s in server.skipped)


def test_a_crowd_of_200_concurrent_clients_is_all_served_byte_exact() -> None:
    """A bounded soak: completion and correctness, not latency (bench_serve.py has that)."""
    def one(_: int) -> bytes:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            conn.request("POST", "/v1/messages", body=b"{}")
            return conn.getresponse().read()
        finally:
            conn.close()

    with SSEServer(BODY, speed=math.inf) as server, ThreadPoolExecutor(200) as pool:
        bodies = list(pool.map(one, range(200)))
        assert len(server.requests) == 200
    assert bodies == [BODY] * 200


def test_a_crowd_arriving_at_once_is_queued_not_turned_away() -> None:
    """Before the server accepts anyone, 100 connections must all complete their handshake:
    the stdlib backlog of 5 leaves the rest retrying SYNs for a second or more."""
    server = SSEServer(BODY, speed=math.inf)  # listening, not yet accepting
    socks = []
    try:
        for _ in range(100):
            socks.append(socket.create_connection(("127.0.0.1", server.port), timeout=0.5))
    except TimeoutError:
        pass
    finally:
        for s in socks:
            s.close()
        server.close()
    assert len(socks) == 100
