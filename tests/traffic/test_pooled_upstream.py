"""A pooled upstream connection that sent bytes nobody asked for is never reused (issue #34:
an unsolicited response, or a 408 on idle, written 0.3 s after a sized answer went to the
client whose request went out on that connection next): it is checked for anything readable
before reuse, and discarded."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from streamcalls_lab.traffic import proxy as proxy_module
from streamcalls_lab.traffic.proxy import RecordingProxy

from ..support.raw_upstream import _head, _post, raw_upstream

GOOD = b'data: {"n": 1}\n\n'
EVIL = b'data: {"someone": "else"}\n\n'


@pytest.mark.parametrize("late", [
    _head("200 OK", "text/event-stream", f"content-length: {len(EVIL)}") + EVIL,
    _head("408 Request Timeout", "text/plain", "content-length: 7", "connection: close")
    + b"timeout",
], ids=["unsolicited-response", "408-on-idle"])
def test_a_connection_that_spoke_unasked_is_not_reused(late: bytes, tmp_path: Path) -> None:
    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(GOOD)}")
                     + GOOD)
        time.sleep(0.3)
        conn.sendall(late)
        time.sleep(2)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        first = _post(proxy.base_url).read()
        time.sleep(0.8)  # the late bytes are in the pooled connection by now
        second = _post(proxy.base_url)
        assert (first, second.status, second.read()) == (GOOD, 200, GOOD)


def test_a_408_that_comes_after_the_next_request_went_out_is_not_its_answer(
    tmp_path: Path,
) -> None:
    """The late 408 reaches the pooled connection only after the next request was written
    on it: the readable check before reuse cannot see it, so the 408 is taken for what it
    is (the upstream's idle timeout) and the request goes again on a fresh connection."""
    def script(conn: socket.socket, head: bytes) -> None:
        conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(GOOD)}")
                     + GOOD)
        time.sleep(0.3)
        conn.sendall(_head("408 Request Timeout", "text/plain", "content-length: 7",
                           "connection: close") + b"timeout")
        time.sleep(2)

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        first = _post(proxy.base_url).read()
        second = _post(proxy.base_url)  # at once: well inside the 0.3 s
        assert (first, second.status, second.read()) == (GOOD, 200, GOOD)


def test_a_connection_idle_past_the_limit_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(proxy_module, "IDLE_SECONDS", 0.2)
    connections: list[bytes] = []

    def script(conn: socket.socket, head: bytes) -> None:
        connections.append(head)
        conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(GOOD)}")
                     + GOOD)
        time.sleep(3)  # open and silent: only its age says not to use it again

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        assert _post(proxy.base_url).read() == GOOD
        time.sleep(0.4)
        assert _post(proxy.base_url).read() == GOOD
    assert len(connections) == 2


def test_a_connection_is_reused_while_it_is_young_and_quiet(tmp_path: Path) -> None:
    """The checks above keep pooling: a second request at once goes on the same connection."""
    seen: list[bytes] = []

    def script(conn: socket.socket, head: bytes) -> None:
        seen.append(head)
        for _ in range(2):
            conn.sendall(_head("200 OK", "text/event-stream", f"content-length: {len(GOOD)}")
                         + GOOD)
            if conn.recv(65536) == b"":  # the next request's head (and empty body)
                return

    with raw_upstream(script) as base, RecordingProxy(base, tmp_path) as proxy:
        assert _post(proxy.base_url).read() == GOOD
        assert _post(proxy.base_url).read() == GOOD
    assert len(seen) == 1
