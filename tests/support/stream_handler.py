"""The handler the traffic tests' loopback upstreams share: it reads the request and answers
with a stream, as ``LoopbackServer`` serves it; a test's handler says only what it sends."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any


class StreamHandler(BaseHTTPRequestHandler):
    """Answers every POST (its body read first) through :meth:`answer`, logging nothing."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.answer()

    def answer(self) -> None:
        raise NotImplementedError

    def stream(self, body: bytes, *, sized: bool = True, **headers: str) -> None:
        """A 200 event stream of ``body``, with these headers (``content_encoding="gzip"``
        as ``content-encoding``) and a ``content-length`` unless not ``sized``."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        if sized:
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
