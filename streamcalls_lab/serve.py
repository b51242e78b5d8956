"""A local HTTP server that streams a capture back, byte for byte, read by read.

Point an official SDK client at it (``base_url``, any fake key) and the SDK
meets the recorded stream exactly as the provider sent it: same bytes, same
read boundaries (one HTTP chunk per read), same pace or a scaled one. Every
POST or GET path answers, so ``/v1/messages``, ``/v1/chat/completions`` and
``/v1/responses`` all work. It binds to loopback only.

Requests are remembered in memory (method, path, headers) so a test can see
what a client sent; credential values are kept only as fingerprints, so even
printing that log in a notebook never shows a key.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import provenance
from .eventstream import is_eventstream
from .replay import Clock, Read, Sleep, paced, reads
from .sources import Source, resolve

EVENT_STREAM = "text/event-stream"
AWS_EVENT_STREAM = "application/vnd.amazon.eventstream"  # what Bedrock sends


@dataclass(frozen=True)
class Request:
    """What a client sent: credential header values replaced by their fingerprints."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = field(repr=False)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class SSEServer:
    """Serve the captures of ``source`` in turn (one per request, cycling) on loopback.

    Use as a context manager: ``with SSEServer(path) as server: server.base_url``.
    ``speed`` scales the recorded pace (``math.inf``: no waiting);
    ``default_delay`` spaces the frames of an untimed capture; ``clock`` and
    ``sleep`` replace the real ones in tests.
    """

    def __init__(
        self,
        source: Source,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        speed: float = 1.0,
        default_delay: float = 0.0,
        status: int = 200,
        content_type: str | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
    ) -> None:
        if not _is_loopback(host):
            raise ValueError(f"refusing to serve on {host!r}: only loopback addresses")
        caps = resolve(source)
        if not caps:
            raise ValueError("nothing to serve: the source holds no capture")
        self.names = [c.name for c in caps]
        self.turns: list[list[Read]] = [
            reads(c.chunks, default_delay=default_delay, name=c.name) for c in caps
        ]
        self.speed = speed
        self.status = status
        self.content_type = content_type
        """The content-type header; None: each capture's own framing says (SSE or AWS)."""
        self.sleep = sleep
        self.clock = clock
        self.requests: list[Request] = []
        self._next = 0
        self._lock = threading.Lock()
        self._httpd = _HTTPServer((host, port), _Handler, self)
        self._thread: threading.Thread | None = None

    # -- addresses ----------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        host = self._httpd.server_address[0]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    # -- lifecycle ----------------------------------------------------------------
    def start(self) -> SSEServer:
        # A short poll interval: shutdown() waits for the loop to notice, up to one interval.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True, name=f"sse-server:{self.port}")
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

    def __enter__(self) -> SSEServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- per request ----------------------------------------------------------------
    def _take_turn(self) -> list[Read]:
        with self._lock:
            turn = self.turns[self._next % len(self.turns)]
            self._next += 1
        return turn

    def _remember(self, method: str, path: str, headers: Any, body: bytes) -> None:
        kept = {}
        for name, value in headers.items():
            key = name.lower()
            kept[key] = provenance.fingerprint(value) if provenance.is_secret_name(key) else value
        with self._lock:
            self.requests.append(Request(method, path, kept, body))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, owner: SSEServer) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: request lines are the caller's business, and headers never get logged."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self._stream("POST", body)

    def do_GET(self) -> None:
        self._stream("GET", b"")

    def _stream(self, method: str, body: bytes) -> None:
        owner = self.server.owner
        owner._remember(method, self.path, self.headers, body)
        turn = owner._take_turn()
        content_type = owner.content_type or _content_type(turn)
        self.close_connection = True
        self.send_response(owner.status)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        try:
            for data in paced(turn, speed=owner.speed, clock=owner.clock, sleep=owner.sleep):
                if data:  # an empty chunk would end a chunked body early
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up mid-stream, as clients do


def _content_type(turn: list[Read]) -> str:
    first = next((r.data for r in turn if r.data), b"")
    return AWS_EVENT_STREAM if is_eventstream(first) else EVENT_STREAM


@contextlib.contextmanager
def serve(
    source: Source,
    *,
    port: int = 0,
    speed: float = 1.0,
    default_delay: float = 0.0,
    status: int = 200,
) -> Iterator[str]:
    """``with serve(capture) as base_url:`` a running :class:`SSEServer` for the block."""
    with SSEServer(source, port=port, speed=speed, default_delay=default_delay,
                   status=status) as server:
        yield server.base_url
