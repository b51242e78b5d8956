"""A threaded HTTP server bound to loopback only, run in the background around a block.

``serve`` (replaying a capture) and ``proxy`` (recording live traffic) are both
one of these with their own request handler; the handler reaches its owner as
``self.server.owner``.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OwnedHTTPServer(ThreadingHTTPServer):
    """One thread per connection; ``owner`` is the :class:`LoopbackServer` handlers consult."""

    daemon_threads = True
    request_queue_size = 128  # SDKs open many connections at once; 5 would drop some SYNs

    def __init__(self, address: tuple[str, int], handler: type, owner: Any) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self.owner = owner

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is routine, not worth a traceback; anything else is."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class StreamHandler(BaseHTTPRequestHandler):
    """A handler that answers each request with a chunked stream, logging nothing
    (request lines are the caller's business, and headers never get logged)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def start_stream(
        self, status: int, content_type: str, *extra: tuple[str, str], close: bool = True
    ) -> None:
        """Send the head of a chunked, uncached response (``extra`` headers too); ``close``:
        the connection closes after it, else it stays open if the client asked for that."""
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in extra:
            self.send_header(name, value)
        if close:
            self.close_connection = True
            self.send_header("connection", "close")
        self.end_headers()


def chunk(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk (empty ``data`` is the last chunk, ending the body)."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class LoopbackServer:
    """Bind ``handler`` to ``host:port`` (port 0: any free one); refuses non-loopback hosts.

    Use as a context manager (``with Server(...) as s: s.base_url``), or call
    :meth:`serve_forever` in the foreground. A subclass may set ``httpd_class`` (a larger
    listen backlog, say).
    """

    httpd_class: type[OwnedHTTPServer] = OwnedHTTPServer

    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str, port: int) -> None:
        if not is_loopback(host):
            raise ValueError(f"refusing to serve on {host!r}: only loopback addresses")
        self._httpd = self.httpd_class((host, port), handler, self)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        host = self._httpd.server_address[0]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    def start(self) -> Self:
        # A short poll interval: shutdown() waits for the loop to notice, up to one interval.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), daemon=True,
            name=f"{type(self).__name__}:{self.port}")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def close(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
