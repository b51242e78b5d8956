"""A pooled upstream connection that sent bytes nobody asked for is never reused (issue #34:
an unsolicited response, or a 408 on idle, written 0.3 s after a sized answer went to the
client whose request went out on that connection next): it is checked for anything readable
before reuse, and discarded."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from streamcalls_lab.traffic.proxy import RecordingProxy

from .test_proxy import _head, _post, raw_upstream

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
