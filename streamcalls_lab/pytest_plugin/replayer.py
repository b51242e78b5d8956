"""The server a test's client talks to in replay mode: each request answered from the cassette.

A request is matched to the first recording not yet used with the same method and target
(path and query, with credential values scrubbed as the proxy scrubbed them when it
recorded), so a test that asks twice is answered twice, in order. A request that matches
none is never sent anywhere: it is answered 404 with a JSON error naming it, and kept in
:attr:`CassetteServer.misses`, which the plugin turns into the test's failure. Only with a
``fallback`` (the recording proxy, in ``new_episodes`` mode) does a miss go on, to be
recorded.

Each read is one HTTP chunk, at the recorded pace scaled by ``speed`` (``math.inf``: at
once). A recording that broke off is replayed as cut: its bytes, then the connection closed
without the chunked body's end, as the upstream left it.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from .. import provenance
from ..traffic import _http1 as http1
from ..traffic import replay
from ..traffic.serve import MAX_BODY
from ..traffic.server import LoopbackServer, OwnedHTTPServer, StreamHandler, chunk
from .cassette import Recording

MISS_STATUS = 404
"""Not retried by the SDKs (they retry 408, 409, 429 and 5xx), so a miss fails at once."""


def scrubbed_target(target: str, body: bytes, headers: Sequence[tuple[str, str]]) -> str:
    """A request target as a cassette records it: credential values scrubbed (the proxy's
    rule, :func:`provenance.exchange_secrets`)."""
    if "://" in target.split("?", 1)[0]:
        parts = urlsplit(target)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    secrets = provenance.exchange_secrets(target, body, list(headers))
    return provenance.scrub_url("http://x" + target, secrets).removeprefix("http://x")


class CassetteServer(LoopbackServer):
    """Answer requests on loopback from ``recordings`` (see the module docstring)."""

    def __init__(self, recordings: Sequence[Recording], *, name: str, speed: float = 1.0,
                 fallback: str | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.recordings = list(recordings)
        self.name = name
        self.speed = speed
        for rec in self.recordings:  # a pace that cannot be slept out is refused now
            replay.due_times(rec.reads, speed)
        self.fallback = urlsplit(fallback) if fallback else None
        self.used = [False] * len(self.recordings)
        self.misses: list[str] = []
        self.served: list[Recording] = []
        self.max_body = MAX_BODY
        self._lock = threading.Lock()
        super().__init__(_Handler, host, port)

    def take(self, method: str, target: str) -> Recording | None:
        with self._lock:
            for i, rec in enumerate(self.recordings):
                if not self.used[i] and rec.method == method and rec.path == target:
                    self.used[i] = True
                    self.served.append(rec)
                    return rec
        return None

    def miss(self, method: str, target: str) -> str:
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in target)
        recorded = ", ".join(sorted({f"{r.method} {r.path}" for r in self.recordings}))
        text = (f"{method} {shown} matches no recording left in cassette {self.name} "
                f"(recorded: {recorded or 'nothing'}); nothing was sent to the network")
        with self._lock:
            self.misses.append(text)
        return text


class _Handler(StreamHandler):
    server: OwnedHTTPServer

    def do_GET(self) -> None:
        owner: CassetteServer = self.server.owner
        try:
            body = self.body(MAX_BODY)
        except http1.BadMessage as e:
            self.refuse(e.status, e.reason)
            return
        method = self.command
        target = scrubbed_target(self.path, body, list(self.headers.items()))
        rec = owner.take(method, target)
        if rec is not None:
            self._replay(owner, rec)
        elif owner.fallback is not None:
            self._forward(owner, method, body)
        else:
            self._refuse_miss(owner.miss(method, target))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _refuse_miss(self, text: str) -> None:
        payload = json.dumps({"error": {"type": "streamcalls_cassette_miss",
                                        "message": text}}).encode()
        self.closing(MISS_STATUS, payload, "application/json")

    def _replay(self, owner: CassetteServer, rec: Recording) -> None:
        self.start_stream(rec.status, replay.content_type(rec.reads))
        try:
            for data in replay.paced(rec.reads, speed=owner.speed, clock=time.monotonic):
                if data:  # an empty chunk would end the body early
                    self.wfile.write(chunk(data))
            if rec.cut_off is None:
                self.wfile.write(chunk(b""))
            # else: no last chunk; the connection closes, as the upstream's broke off
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up mid-stream

    def _forward(self, owner: CassetteServer, method: str, body: bytes) -> None:
        """new_episodes: the request goes to the recording proxy, and its answer back as it
        comes (the proxy saves it in the cassette)."""
        assert owner.fallback is not None
        conn = http.client.HTTPConnection(owner.fallback.hostname, owner.fallback.port,
                                          timeout=600)
        try:
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("host", "content-length", "transfer-encoding",
                                            "connection")}
            conn.request(method, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            self.start_stream(resp.status, resp.getheader("content-type") or "text/plain",
                              *[(k, v) for k, v in resp.getheaders()
                                if k.lower() in ("content-encoding",)])
            while data := resp.read1(1 << 16):
                self.wfile.write(chunk(data))
            self.wfile.write(chunk(b""))
        except (OSError, http.client.HTTPException):
            self.close_connection = True
        finally:
            conn.close()
