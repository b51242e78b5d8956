"""An OTLP/HTTP receiver on loopback: what a tracer exports, kept for judging.

``POST /v1/traces``, ``/v1/logs`` (where GenAI instrumentations put their events) and
Langfuse's ``/api/public/otel/v1/traces``, as
``application/x-protobuf`` (read by the real ``opentelemetry-proto`` schema) or
``application/json``, gzip-encoded or not. Bodies are bounded (declared and inflated);
what it cannot read is refused with a status that says why (404 path, 405 method, 413 too
large, 415 content type or encoding, 400 unreadable body) and kept as a refusal, so a
tracer whose export was refused is reported, not judged on nothing.
"""

from __future__ import annotations

import threading
import zlib
from typing import Any

from ..errors import CaptureError
from ..traffic import _http1 as http1
from ..traffic.server import LoopbackServer, StrictHandler
from .otlp_json import turns_of
from .otlp_proto import documents
from .records import TracedTurn, read_json

MAX_BODY = 8 * 1024 * 1024
"""The largest request body, declared or inflated, the receiver reads."""
_PATHS = {"/v1/traces": "traces", "/v1/logs": "logs",
          "/api/public/otel/v1/traces": "traces"}  # Langfuse's OTLP ingestion path


class _Handler(StrictHandler):
    def do_GET(self) -> None:
        self.refuse(405, "OTLP/HTTP takes POST only")

    def do_POST(self) -> None:
        owner: OTLPReceiver = self.server.owner  # type: ignore[attr-defined]
        path = self.path.split("?", 1)[0]
        kind = _PATHS.get(path)
        ctype = (self.headers.get("content-type") or "").split(";")[0].strip().lower()
        encoding = (self.headers.get("content-encoding") or "identity").strip().lower()
        try:
            body = self.body(MAX_BODY)
        except http1.BadMessage as e:
            owner.refused(path, e.status, e.reason)
            self.refuse(e.status, e.reason)
            return
        status, reason = 200, ""
        if kind is None:
            status, reason = 404, f"no OTLP signal at {path!r} (/v1/traces, /v1/logs)"
        elif ctype not in ("application/x-protobuf", "application/json"):
            status, reason = 415, f"content type {ctype!r}: protobuf or JSON only"
        elif encoding not in ("identity", "gzip"):
            status, reason = 415, f"content encoding {encoding!r}: gzip or none only"
        if status == 200 and encoding == "gzip":
            try:
                inflate = zlib.decompressobj(wbits=31)
                body = inflate.decompress(body, MAX_BODY + 1)
                if len(body) > MAX_BODY or inflate.unconsumed_tail:
                    status, reason = 413, f"inflates past {MAX_BODY} bytes"
            except zlib.error as e:
                status, reason = 400, f"not gzip: {e}"
        if status == 200:
            source = f"OTLP/HTTP {path} #{owner.requests + 1}"
            try:
                docs = (documents(body, source, kind) if ctype == "application/x-protobuf"
                        else [read_json(body, source)])
                turns_of(docs, source)  # a body no reader takes is refused, not kept
            except CaptureError as e:
                status, reason = 400, str(e)
            else:
                owner.keep(docs)
        if status != 200:
            owner.refused(path, status, reason)
            self.refuse(status, reason)
            return
        answer = b"" if ctype == "application/x-protobuf" else b"{}"
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


class OTLPReceiver(LoopbackServer):
    """Use as a context manager; ``endpoint`` is what ``OTEL_EXPORTER_OTLP_ENDPOINT``
    takes. :meth:`take` hands over (and forgets) what arrived so far."""

    max_body = MAX_BODY

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(_Handler, host, port)
        self._lock = threading.Lock()
        self._docs: list[Any] = []
        self.refusals: list[tuple[str, int, str]] = []
        self.requests = 0

    @property
    def endpoint(self) -> str:
        return self.base_url

    def keep(self, docs: list[Any]) -> None:
        with self._lock:
            self._docs += docs
            self.requests += 1

    def refused(self, path: str, status: int, reason: str) -> None:
        with self._lock:
            self.refusals.append((path, status, reason))
            self.requests += 1

    def take(self) -> list[Any]:
        with self._lock:
            docs, self._docs = self._docs, []
            return docs

    def turns(self) -> list[TracedTurn]:
        """The traced turns of everything taken now (spans joined with their logs)."""
        return turns_of(self.take(), "OTLP/HTTP")
