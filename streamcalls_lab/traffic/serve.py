"""A local HTTP server that streams a capture back, byte for byte, read by read.

Point an official SDK client at it (``base_url``, any fake key) and the SDK
meets the recorded stream exactly as the provider sent it: same bytes, same
read boundaries (one HTTP chunk per read), same pace or a scaled one. Every
POST or GET path answers, so ``/v1/messages``, ``/v1/chat/completions`` and
``/v1/responses`` all work. It binds to loopback only.

Requests are remembered in memory (method, path, headers, body) so a test can
see what a client sent; credential values are kept only as fingerprints, in
headers, in the query (``?key=``) and under secret-named keys of a JSON body,
so even printing that log in a notebook never shows a key. Only the last
``max_requests`` are kept.

Many clients at once: a thread per connection, a listen backlog of
:data:`BACKLOG` (not the stdlib's 5, which makes a crowd wait for
retransmits), an idle timeout so a silent client frees its thread, a
``header_timeout`` from a request's first byte to the end of its head and at
most ``max_connections`` at once (past it, the connection waiting longest for a
head makes way, or 503 when every one is being answered: see :mod:`.server`), so
slow clients cannot hold threads without end. A request whose framing is ambiguous (RFC 9112: see
:mod:`.http1`) is answered 400 and its connection closed; a body over
:data:`MAX_BODY` 413. A directory's symlink that leads outside it is not
served.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from .. import echoes, provenance
from ..sources import Capture, Source, resolve
from . import _http1 as http1
from . import replay
from .replay import Clock, Read, Sleep, paced, reads
from .server import (
    HEADER_TIMEOUT,
    MAX_CONNECTIONS,
    LoopbackServer,
    OwnedHTTPServer,
    StreamHandler,
    chunk,
)

BACKLOG = 1024
MAX_BODY = 16 * 1024**2
"""Largest request body read (a client's JSON request): more is refused with 413."""
EVENT_STREAM = replay.EVENT_STREAM
AWS_EVENT_STREAM = replay.AWS_EVENT_STREAM


@dataclass(frozen=True)
class Request:
    """What a client sent: credential header values replaced by their fingerprints."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = field(repr=False)


class _HTTPServer(OwnedHTTPServer):
    request_queue_size = BACKLOG


class SSEServer(LoopbackServer):
    """Serve the captures of ``source`` in turn (one per request, cycling) on loopback.

    Use as a context manager: ``with SSEServer(path) as server: server.base_url``.
    ``speed`` scales the recorded pace (``math.inf``: no waiting);
    ``default_delay`` spaces the frames of an untimed capture; ``clock`` and
    ``sleep`` replace the real ones in tests.
    """

    httpd_class = _HTTPServer

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
        idle_timeout: float = 30.0,
        header_timeout: float = HEADER_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        max_requests: int = 1000,
    ) -> None:
        caps, self.skipped = _servable(source)
        if not caps:
            raise ValueError("nothing to serve: the source holds no capture")
        self.names = [c.name for c in caps]
        self.turns: list[list[Read]] = [
            reads(c.chunks, default_delay=default_delay, name=c.name) for c in caps
        ]
        for turn in self.turns:  # a pace that cannot be slept out is refused now, not mid-request
            replay.due_times(turn, speed)
        self.speed = speed
        self.status = status
        self.content_type = content_type
        """The content-type header; None: what the capture's framing calls for (see
        :func:`replay.content_type`)."""
        self.sleep = sleep
        self.clock = clock
        self.idle_timeout = idle_timeout
        """Seconds a connection may stay silent before its thread lets it go."""
        self.header_timeout = header_timeout
        """Seconds from a request's first byte to the end of its head."""
        self.max_body = MAX_BODY
        self.requests: deque[Request] = deque(maxlen=max_requests)
        self._next = 0
        self._lock = threading.Lock()
        super().__init__(_Handler, host, port, max_connections)

    # -- per request ----------------------------------------------------------------
    def _take_turn(self) -> list[Read]:
        with self._lock:
            turn = self.turns[self._next % len(self.turns)]
            self._next += 1
        return turn

    def _remember(self, method: str, path: str, headers: Any, body: bytes) -> None:
        kept = {}
        secrets = provenance.exchange_secrets(path, body, list(headers.items()))
        for name, value in headers.items():
            key = name.lower()
            if provenance.is_secret_name(key):
                value = provenance.fingerprint(value)
            kept[key] = value
        for s in sorted(set(secrets), key=len, reverse=True):  # a secret before its parts
            for form in provenance.secret_forms(s):
                mark = provenance.fingerprint(s)
                path = path.replace(form, mark)
                body = body.replace(form.encode("utf-8", "replace"), mark.encode())
        body, _ = echoes.scrub(body, secrets)  # and every other spelling (escaped in any mix,
        raw_path, _ = echoes.scrub(path.encode("utf-8", "surrogateescape"), secrets)  # base64)
        path = raw_path.decode("utf-8", "surrogateescape")
        with self._lock:
            self.requests.append(Request(method, path, kept, body))


def _servable(source: Source) -> tuple[list[Capture], list[str]]:
    """The captures to serve, and why each other entry is not (unreadable, or a symlink in
    a directory that leads outside it)."""
    caps = resolve(source)
    if not isinstance(source, str | PathLike) or not Path(source).is_dir():
        return caps, []
    root = Path(source).resolve()
    keep, skipped = [], []
    for cap in caps:
        if cap.problem is not None:
            skipped.append(f"{cap.name}: {cap.problem.reason}")
        elif cap.path is not None and not cap.path.resolve().is_relative_to(root):
            skipped.append(f"{cap.name}: a symlink to a file outside {source}")
        else:
            keep.append(cap)
    return keep, skipped


class _Handler(StreamHandler):
    server: _HTTPServer

    def setup(self) -> None:
        self.timeout = self.server.owner.idle_timeout  # an idle client frees its thread
        super().setup()

    def handle(self) -> None:
        try:
            super().handle()
        except TimeoutError:
            self.close_connection = True  # silent past the idle timeout: let it go

    def do_POST(self) -> None:
        self._answer("POST")

    def do_GET(self) -> None:
        self._answer("GET")

    def _answer(self, method: str) -> None:
        try:  # read whole, even for a GET: what is left would be taken for a request
            body = self.body(MAX_BODY)
        except http1.BadMessage as e:
            self.refuse(e.status, e.reason)
            return
        self._stream(method, body)

    def _stream(self, method: str, body: bytes) -> None:
        owner = self.server.owner
        owner._remember(method, self.path, self.headers, body)
        turn = owner._take_turn()
        content_type = owner.content_type or replay.content_type(turn)
        self.start_stream(owner.status, content_type)
        try:
            for data in paced(turn, speed=owner.speed, clock=owner.clock, sleep=owner.sleep):
                if data:  # an empty chunk would end a chunked body early
                    self.wfile.write(chunk(data))
            self.wfile.write(chunk(b""))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up mid-stream, as clients do


@contextlib.contextmanager
def serve(source: Source, **options: Any) -> Iterator[str]:
    """``with serve(capture) as base_url:`` a running :class:`SSEServer` for the block
    (``options``: its keywords, such as ``port``, ``speed``, ``default_delay``, ``status``)."""
    with SSEServer(source, **options) as server:
        yield server.base_url
