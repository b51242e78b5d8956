"""A raw, lenient upstream for the proxy's hostile-request tests: it reads requests the ways
a careless server would, so a request the proxy lets through that it can read two ways shows."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Callable

TIMEOUT = 20  # seconds a test waits on a socket


class Upstream:
    """A raw upstream that answers every request it can read (by Content-Length or chunked,
    leniently: any line end, a folded line taken for a header of its own, Transfer-Encoding
    before Content-Length), and notes each request's path, headers and body."""

    def __init__(self, answer: Callable[[bytes, dict[bytes, bytes], bytes], bytes] | None
                 = None, wait_for_more: bool = False) -> None:
        self.seen: list[tuple[bytes, dict[bytes, bytes], bytes]] = []
        self.answer = answer or (lambda path, headers, body: b"answer to " + path)
        self.wait_for_more = wait_for_more
        """Read again before answering what is already buffered, as a server that reads
        whatever has arrived before it looks at it does."""
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.stop = threading.Event()
        self.base = f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _serve(self, conn: socket.socket) -> None:
        buf = b""

        def more() -> bool:
            nonlocal buf
            data = conn.recv(65536)
            buf += data
            return bool(data)

        with conn, contextlib.suppress(OSError):
            while True:
                while b"\r\n\r\n" not in buf and b"\n\n" not in buf:
                    if not more():
                        return
                head, _, buf = re.split(rb"(\r\n\r\n|\n\n)", buf, maxsplit=1)
                lines = re.split(rb"\r\n|\r|\n", head)
                path = lines[0].split(b" ")[1]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.strip().partition(b":")
                    headers[name.strip().lower()] = value.strip()
                body = b""
                if b"chunked" in headers.get(b"transfer-encoding", b""):
                    while True:
                        while b"\r\n" not in buf:
                            more()
                        size, _, buf = buf.partition(b"\r\n")
                        n = int(size.split(b";")[0] or b"0", 16)
                        while len(buf) < n + 2:
                            more()
                        body, buf = body + buf[:n], buf[n + 2:]
                        if not n:
                            break
                else:
                    n = int(headers.get(b"content-length", b"0"))
                    while len(buf) < n:
                        more()
                    body, buf = buf[:n], buf[n:]
                self.seen.append((path, headers, body))
                answer = self.answer(path, headers, body)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"content-length: %d\r\n\r\n%s" % (len(answer), answer))
                if self.wait_for_more and not more():
                    return

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(TIMEOUT)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def __enter__(self) -> Upstream:
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(5)
        self.listener.close()
