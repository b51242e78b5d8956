"""A bare upstream on loopback that runs a script per connection, and the raw requests the
proxy tests send it (shared by tests/traffic/test_proxy.py and test_pooled_upstream.py)."""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import threading
from collections.abc import Callable, Iterator

TIMEOUT = 20  # seconds: no request here comes near it


Script = Callable[[socket.socket, bytes], None]


def read_head(conn: socket.socket) -> bytes:
    """What ``conn`` sends up to and with the first blank line (all it sent, if it closed
    before one: the caller tells a whole head from that by its ending)."""
    data = b""
    while b"\r\n\r\n" not in data and (more := conn.recv(65536)):
        data += more
    return data


@contextlib.contextmanager
def listening(one: Callable[[socket.socket], None]) -> Iterator[tuple[str, list[object]]]:
    """A loopback listener that runs ``one(conn)`` on a thread of its own for each connection;
    gives its base URL and the peers that connected, in order."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stop = threading.Event()
    peers: list[object] = []

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, peer = listener.accept()
            except TimeoutError:
                continue
            peers.append(peer)
            conn.settimeout(TIMEOUT)
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", peers
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@contextlib.contextmanager
def raw_upstream(script: Script) -> Iterator[str]:
    """An upstream that reads one request per connection, then runs ``script(conn, head)``."""

    def one(conn: socket.socket) -> None:
        with conn:
            head, _, rest = read_head(conn).partition(b"\r\n\r\n")
            found = re.search(rb"(?im)^content-length: *(\d+)", head)
            while found and len(rest) < int(found.group(1)) and (more := conn.recv(65536)):
                rest += more
            with contextlib.suppress(OSError):
                script(conn, head)

    with listening(one) as (base, _):
        yield base


def _head(status: str = "200 OK", ctype: str = "text/event-stream", *extra: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"content-type: {ctype}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _post(base_url: str, path: str = "/v1/messages", body: bytes = b'{"stream": true}',
          headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    conn.request("POST", path, body=body, headers=headers or {})
    return conn.getresponse()
