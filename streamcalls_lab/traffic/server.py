"""A threaded HTTP server bound to loopback only, run in the background around a block.

``serve`` (replaying a capture) and ``proxy`` (recording live traffic) are both
one of these with their own request handler; the handler reaches its owner as
``self.server.owner``.

Both hold every client to the same limits (:class:`StrictHandler`): a request's
framing read one way only (:mod:`.http1`), its head (request line and headers)
sent within ``header_timeout`` seconds of its first byte, and at most
``max_connections`` connections at once. When all are taken, a new connection
takes the place of the one that has waited longest for a request head (a client
trickling its head in, or idle between requests): that one is closed, as an idle
keep-alive connection may be (RFC 9112 §9.6). A crowd of slow clients (slowloris: a
byte every few seconds), even one that reconnects at once, so only ever pushes out
its own oldest connections, never a client whose request is whole and being
answered; only when every connection is busy answering is one more answered 503.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from . import _http1 as http1

HEADER_TIMEOUT = 10.0
"""Seconds from a request's first byte to the end of its head (default)."""
MAX_CONNECTIONS = 512
"""Connections served at once (default): more push out the one waiting longest for a
head, or are answered 503 and closed when none is."""
EVICT_WAIT = 2.0
"""Seconds the accepting thread waits for a pushed-out connection's slot to come free."""
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
         b"content-length: 30\r\nconnection: close\r\n\r\ntoo many connections at once\r\n")


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

    def __init__(self, address: tuple[str, int], handler: type, owner: Any,
                 max_connections: int = MAX_CONNECTIONS,
                 tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {max_connections}")
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self.owner = owner
        self._slots = threading.BoundedSemaphore(max_connections)
        # Connections waiting for a request head, oldest first (dicts keep insertion order).
        self._waiting: dict[socket.socket, None] = {}
        self._waiting_lock = threading.Lock()

    def get_request(self) -> tuple[socket.socket, Any]:
        """The next connection; under ``tls``, its handshake left to its own thread's
        first read (the accepting thread never waits on a client)."""
        sock, address = super().get_request()
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def waiting(self, sock: socket.socket, now: bool) -> None:
        """``sock`` starts (``now``) or ends waiting for a request head."""
        with self._waiting_lock:
            self._waiting.pop(sock, None)
            if now:
                self._waiting[sock] = None

    def _push_out(self) -> bool:
        """Close the connection that has waited longest for a head; False if none waits."""
        with self._waiting_lock:
            if not self._waiting:
                return False
            sock = next(iter(self._waiting))
            del self._waiting[sock]
            # Its handler's read ends at once; the handler closes it, freeing its slot.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            return True

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection; when all slots are taken, the place of the
        connection waiting longest for a head, or else 503 and closed (the answer sent
        without waiting: the accepting thread never blocks on a client)."""
        if not self._slots.acquire(blocking=False) and not (
                self._push_out() and self._slots.acquire(timeout=EVICT_WAIT)):
            try:
                request.setblocking(False)
                request.send(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)  # type: ignore[misc]
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up, or fails its TLS handshake (it does not trust the
        certificate, or speaks plain HTTP), is routine, not worth a traceback; anything else is."""
        if not isinstance(sys.exc_info()[1], ConnectionError | ssl.SSLError):
            super().handle_error(request, client_address)


class _Clocked(io.RawIOBase):
    """The client's socket as its handler reads it: each read waits at most ``idle``
    seconds; while a head is read, no later than ``header_timeout`` after its first byte."""

    def __init__(self, sock: socket.socket, idle: float | None) -> None:
        self.sock = sock
        self.idle = idle
        self.budget: float | None = None
        self.deadline: float | None = None
        self._wait: float | None = sock.gettimeout()

    def readable(self) -> bool:
        return True

    def arm(self, budget: float | None) -> None:
        """Time the next head: ``budget`` seconds from its first byte (None: untimed)."""
        self.budget, self.deadline = budget, None

    def disarm(self) -> None:
        self.budget = self.deadline = None
        self._set(self.idle)  # writes, too, wait as long as before

    def _set(self, wait: float | None) -> None:
        if wait != self._wait:  # a system call each time: only when it changes
            self.sock.settimeout(wait)
            self._wait = wait

    def readinto(self, buffer: Any) -> int:
        wait = self.idle
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request head took longer than its timeout")
            wait = left if wait is None else min(wait, left)
        self._set(wait)
        n = self.sock.recv_into(buffer)
        if n and self.budget is not None and self.deadline is None:
            self.deadline = time.monotonic() + self.budget
        return n


class StrictHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing (request lines are the caller's business, and headers
    never get logged) and takes only a request whose framing reads one way (see
    :mod:`.http1`): anything else is answered 400 (413, 501) and the connection closed,
    before the handler's ``do_*`` runs. ``self.framing`` is the request's body framing.

    The owner may set ``header_timeout`` (seconds from a request's first byte to its head's
    end, default :data:`HEADER_TIMEOUT`) and ``max_body`` (a larger declared body is 413).
    """

    protocol_version = "HTTP/1.1"
    framing: http1.Framing = http1.Framing()
    _tap: http1.Tap | None = None
    _checked = False

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the socket's own reader, replaced by one with a head deadline
        self._clock = _Clocked(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self._clock, http1.PIECE)

    def handle_one_request(self) -> None:
        owner = self.server.owner  # type: ignore[attr-defined]
        self._clock.arm(getattr(owner, "header_timeout", HEADER_TIMEOUT))
        self._checked = False
        self.server.waiting(self.connection, True)  # type: ignore[attr-defined]
        try:
            super().handle_one_request()
        finally:
            self._head_read()

    def untimed(self) -> None:
        """From here on, a read of the client waits as long as it takes (a WebSocket
        session's owner watches its idleness itself)."""
        self._clock.idle = None

    def _head_read(self) -> None:
        self._clock.disarm()
        self.server.waiting(self.connection, False)  # type: ignore[attr-defined]

    def parse_request(self) -> bool:
        self._tap = tap = http1.Tap(self.rfile)
        self.rfile = tap  # type: ignore[assignment]
        try:
            ok = super().parse_request()
        finally:
            self.rfile = tap.inner
        self._head_read()  # answering now: no longer one to push out for a newcomer
        return ok and (self._checked or self._check())

    def handle_expect_100(self) -> bool:
        """Checked first: a 100 Continue never invites the body of a request refused."""
        return self._check() and super().handle_expect_100()

    def _check(self) -> bool:
        self._checked = True
        owner = self.server.owner  # type: ignore[attr-defined]
        try:
            http1.check_line(self.raw_requestline, first=True)
            http1.check_target(self.command, self.path)
            for line in self._tap.lines if self._tap is not None else ():
                http1.check_line(line)
            self.framing = http1.framing(self.headers.items(), self.request_version,
                                         max_body=getattr(owner, "max_body", None))
        except http1.BadMessage as e:
            self.refuse(e.status, e.reason)
            return False
        return True

    def refuse(self, status: int, reason: str) -> None:
        """Answer ``status`` with ``reason`` as plain text, and close the connection (what
        is left of the request cannot be trusted to end where it says)."""
        self.closing(status, reason.encode("utf-8", "replace"), "text/plain; charset=utf-8")

    def closing(self, status: int, body: bytes, content_type: str) -> None:
        """Answer ``status`` with ``body`` whole, and close the connection."""
        self.close_connection = True
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def body(self, max_body: int | None = None) -> bytes:
        """The request's whole body (at most ``max_body`` bytes, else 413):
        :class:`http1.BadMessage` when its framing breaks."""
        return b"".join(http1.pieces(self.rfile, self.framing, max_body=max_body))


class StreamHandler(StrictHandler):
    """A handler that answers each request with a chunked stream."""

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
    listen backlog, say). ``tls``: a server context to listen with (``https``).
    """

    httpd_class: type[OwnedHTTPServer] = OwnedHTTPServer
    poll_interval: float = 0.05
    """How often the serving loop looks for a shutdown: :meth:`close` waits up to this."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str, port: int,
                 max_connections: int = MAX_CONNECTIONS,
                 tls: ssl.SSLContext | None = None) -> None:
        if not is_loopback(host):
            raise ValueError(f"refusing to serve on {host!r}: only loopback addresses")
        self._httpd = self.httpd_class((host, port), handler, self, max_connections, tls)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        host = self._httpd.server_address[0]
        host = f"[{host}]" if ":" in host else host
        scheme = "http" if self._httpd.tls is None else "https"
        return f"{scheme}://{host}:{self.port}"

    def start(self) -> Self:
        # A short poll interval: shutdown() waits for the loop to notice, up to one interval.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(self.poll_interval,), daemon=True,
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
