"""A recording reverse proxy: point an SDK's base URL at it and keep every stream it carries.

Each request goes to the upstream unchanged (method, path, query, headers with
the client's own credentials, body); only ``Host`` names the upstream and
hop-by-hop headers (``Connection``, ``Transfer-Encoding``, ``Expect``, ...)
are the proxy's own. The response comes back as it arrives: every upstream
read is written to the client at once (as one HTTP chunk, or as raw bytes when
the upstream gave a length), before it is saved. Only the end of a response
waits until its capture is complete on disk, so a client that has its whole
answer finds the capture finished.

The client receives the upstream's bytes exactly, ``Content-Encoding``
included (a gzipped stream stays gzipped, so the SDK decodes it as it would).
The capture keeps the body after transfer and content decoding: what the
SDK's event parser sees. A body in an encoding the proxy cannot decode (br,
zstd) is passed through and not saved; its ``meta.json`` says why.

Streamed responses (SSE, NDJSON, AWS event-stream, by content type) are saved
in ``out`` as ``<UTC time>-<n>-<path>.sse`` / ``.ndjson`` / ``.eventstream``
with a ``.timing.tsv`` sidecar and a ``.meta.json`` scrubbed by
:mod:`provenance`'s rules (the credentials the client sent, in headers, query or JSON
body, are the secrets).
Others pass through, and are saved too (``.json`` / ``.body``) with
``save_all``. An upstream that cannot be reached closes the client's
connection without an answer, as a dead host would; one that breaks off
mid-body has the client's connection broken at the same byte, and the partial
capture is kept and marked ``"cut_off": "<reason>"``.

A request is held to the framing rules of :mod:`.http1` (RFC 9112): obs-fold,
a repeated or non-numeric ``Content-Length``, a ``Transfer-Encoding`` other than
one final ``chunked``, both, or a bad chunk line are answered 400 and the
connection closed, before anything goes upstream; it goes upstream framed by
the proxy itself (its own ``Content-Length``, or chunked), never as the client
framed it. An upstream response whose framing is as ambiguous is answered 502
and its connection never used again. A body up to :data:`HELD` bytes is read
whole before the request goes on (a framing error in it stops it there); a
larger one goes through in pieces as it comes, up to ``max_body``
(:data:`MAX_BODY`; a larger one is 413 at once). A client that closes its
connection while the upstream is silent has the upstream request closed at
once, not at the upstream's next byte.

A WebSocket upgrade (OpenAI Realtime, Gemini Live) becomes a session recorded as JSON lines
of its messages, both sides', with a timing sidecar (:mod:`.websocket`); the frames pass
both ways unchanged.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from .. import provenance
from ..sources import in_progress
from . import _http1 as http1
from . import websocket
from ._saving import BodyNotSaved, BodyRecorder, Numbers, new_capture
from .replay import AWS_EVENT_STREAM, EVENT_STREAM, JSON, NDJSON, Clock
from .server import (
    HEADER_TIMEOUT,
    MAX_CONNECTIONS,
    LoopbackServer,
    OwnedHTTPServer,
    StrictHandler,
    chunk,
)

CA_BUNDLE_ENV = "STREAMCALLS_CA_BUNDLE"
READ_SIZE = 1 << 16
STREAM_SUFFIXES = {
    EVENT_STREAM: ".sse",
    NDJSON: ".ndjson",  # Ollama
    "application/ndjson": ".ndjson",
    "application/jsonl": ".ndjson",
    "application/x-jsonlines": ".ndjson",
    AWS_EVENT_STREAM: ".eventstream",  # Bedrock
}
# RFC 9110 7.6.1: meaningful for one connection only, never forwarded.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
    "te", "trailer", "transfer-encoding", "upgrade", "expect",
})
STOP_GRACE = 1.0
"""Seconds a stopping proxy waits for open streams to end before it cuts them."""
GONE_GRACE = 0.5
"""Seconds an upstream may take to end its body once the client has left, before it is shut
(and the capture marked cut)."""
IDLE_SECONDS = 2.0
"""An upstream connection idle longer than this is not used again (a fresh one is opened):
under the shortest keep-alive timeouts servers use (gunicorn's 2 s, Node's and uvicorn's
5 s), so a request seldom meets an upstream closing, or writing a 408, as it goes out."""
MAX_IDLE = 16
HELD = 16 * 1024**2
"""A request body up to this size is read whole before it goes upstream; a larger one is
passed on in pieces as it comes (never held whole)."""
MAX_BODY = 4 * 1024**3
"""Largest request body passed on (default): a larger declared size is refused with 413."""
_MODEL_IN_PATH = re.compile(r"/(?:models|model|deployments)/([^/:?]+)")


DATA_STREAM_HEADER = "x-vercel-ai-data-stream"
"""The header an AI SDK 4 data stream is served under (its body is ``text/plain``)."""


def stream_suffix(content_type: str | None, path: str = "",
                  data_stream: str | None = None) -> str | None:
    """The capture suffix for a streamed content type, or None for a whole response.

    Gemini's ``:streamGenerateContent`` without ``?alt=sse`` streams a JSON array under
    ``application/json``: that is a stream too (``.json``; load it by name or glob). An AI
    SDK 4 data stream is ``text/plain`` named by its header (``data_stream``, the value of
    :data:`DATA_STREAM_HEADER`): ``.datastream``."""
    if data_stream is not None and data_stream.strip():
        return ".datastream"
    main = (content_type or "").split(";", 1)[0].strip().lower()
    if main == JSON and ":streamgeneratecontent" in path.split("?", 1)[0].lower():
        return ".json"
    return STREAM_SUFFIXES.get(main)


def model_of(path: str, body: bytes) -> str | None:
    """The model a request names: its JSON body's ``model``, else the path's (Gemini's
    ``/models/X:stream...``, Bedrock's ``/model/X/invoke...``, Azure's ``/deployments/X``),
    else its query's ``model`` (OpenAI Realtime's ``/v1/realtime?model=X``)."""
    try:
        payload = json.loads(body) if body[:1] == b"{" else None
    except (ValueError, RecursionError):  # deep is valid JSON too: the path may still say
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("model"), str):
        return payload["model"]
    found = _MODEL_IN_PATH.search(urlsplit(path).path)
    if found:
        return unquote(found.group(1))
    return next((v for k, v in parse_qsl(urlsplit(path).query) if k == "model" and v), None)


def _connect(parts: SplitResult, timeout: float,
             tls: ssl.SSLContext | None) -> http.client.HTTPConnection:
    """A connection to the upstream, not yet opened."""
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                           context=tls)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)


def _quiet(conn: http.client.HTTPConnection) -> bool:
    """An idle connection the upstream has neither closed nor written to."""
    if conn.sock is None:
        return False
    try:
        return not select.select([conn.sock], [], [], 0)[0]
    except (OSError, ValueError):
        return False



@dataclass(frozen=True)
class Exchange:
    """One proxied request as the proxy logs it: no header value, no credential."""

    method: str
    path: str
    status: int | None
    capture: Path | None
    nbytes: int
    nreads: int
    cut_off: str | None
    note: str | None = None

    def __str__(self) -> str:
        status = "no answer" if self.status is None else str(self.status)
        path = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in self.path)
        text = f"{self.method} {path} -> {status}"  # no terminal escapes from a client
        if self.capture is not None:
            text += f", {self.nbytes} bytes in {self.nreads} reads to {self.capture.name}"
        if self.cut_off:
            text += f", cut off: {self.cut_off}"
        return text + (f" ({self.note})" if self.note else "")


class RecordingProxy(LoopbackServer):
    """Forward everything on ``host:port`` to ``upstream``, saving streamed responses in ``out``.

    ``upstream`` may carry a path prefix (``https://api.openai.com/v1``): it is
    put before every request path. HTTPS upstreams are verified against the
    system's CAs, or ``ca_bundle`` (default: ``$STREAMCALLS_CA_BUNDLE``).
    ``timeout`` bounds each wait for the upstream, not a whole stream. ``log``
    gets one :class:`Exchange` per request. ``max_body``: the largest request body
    passed on; ``header_timeout`` and ``max_connections``: see :mod:`.server`.
    A WebSocket upgrade becomes a recorded session (:mod:`.websocket`), its messages kept
    up to ``max_message`` bytes each. ``tls``: a server context to listen with (an SDK that
    only speaks ``wss://``, as google-genai's live client does, needs one).
    """

    def __init__(
        self,
        upstream: str,
        out: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        save_all: bool = False,
        ca_bundle: str | Path | None = None,
        timeout: float = 600.0,
        clock: Clock = time.monotonic,
        log: Callable[[Exchange], None] | None = None,
        max_body: int = MAX_BODY,
        header_timeout: float = HEADER_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        max_message: int = websocket.MAX_MESSAGE,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme in ("ws", "wss"):  # the same server: a WebSocket begins as HTTP/1.1
            parts = parts._replace(scheme="http" if parts.scheme == "ws" else "https")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the upstream must be an http(s):// or ws(s):// URL with a host")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError("the upstream URL takes no query, fragment or user info")
        self.upstream = parts
        self.prefix = parts.path.rstrip("/")
        self.out = Path(out)
        self.save_all = save_all
        self.ca_bundle = ca_bundle or os.environ.get(CA_BUNDLE_ENV) or None
        if self.ca_bundle and not Path(self.ca_bundle).is_file():
            raise ValueError(f"CA bundle {self.ca_bundle} is not a file")
        # Verifies the upstream against the bundle's CAs only, else the system's.
        self._tls = ssl.create_default_context(
            cafile=str(self.ca_bundle) if self.ca_bundle else None
        ) if parts.scheme == "https" else None
        self.timeout = timeout
        self.clock = clock
        self.log = log
        self.max_body = max_body
        self.header_timeout = header_timeout
        self.max_message = max_message
        self.exchanges: list[Exchange] = []
        self.stopping = threading.Event()
        self.cutting = threading.Event()  # stopping, and open streams' sockets shut
        self._next = Numbers()  # each capture's number in its name
        self._lock = threading.Condition()
        self._idle: list[tuple[http.client.HTTPConnection, float]] = []
        self._busy: set[http.client.HTTPConnection] = set()
        self.out.mkdir(parents=True, exist_ok=True)
        super().__init__(_Handler, host, port, max_connections, tls)

    # -- upstream connections: kept open between requests, as the SDK's own pool would --
    def upstream_headers(self, method: str, client: list[tuple[str, str]],
                         length: int | None) -> list[tuple[str, str]]:
        """The client's headers as they go upstream: ``Host`` the upstream's, hop-by-hop
        ones dropped, the body framed by the proxy: ``length`` bytes, or chunked (None)."""
        out = [("Host", self.upstream.netloc), *_forwardable(client, "content-length")]
        if length is None:
            out.append(("Transfer-Encoding", "chunked"))
        elif length or method in ("POST", "PUT", "PATCH"):
            out.append(("Content-Length", str(length)))
        return out

    def send(self, method: str, target: str, headers: list[tuple[str, str]],
             body: bytes, rest: Iterator[bytes] | None = None,
             watch: _Watch | None = None,
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request upstream (``headers`` as :meth:`upstream_headers` gives them)
        and read the response head. ``rest``: the body's pieces after ``body``, passed on
        as they come (chunked when the headers say so), on a new connection; ``watch``
        is told the connection, to close it if the client leaves.

        A kept-alive connection the upstream has closed meanwhile fails before any
        answer, or answers 408 (a timeout it wrote on idle, which can reach us just
        after the request went out); the request then goes once more on a new
        connection (RFC 9110 §15.5.9: the upstream did not take it), never in any
        other case.
        """
        chunked = ("Transfer-Encoding", "chunked") in headers
        while True:
            conn, reused = self._checkout(fresh=rest is not None)
            try:
                conn.putrequest(method, self.prefix + target, skip_host=True,
                                skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                if rest is None and not chunked:
                    conn.endheaders(body or None)
                else:
                    conn.endheaders()
                    for piece in itertools.chain([body], rest or ()):
                        if piece:
                            conn.send(chunk(piece) if chunked else piece)
                    if chunked:
                        conn.send(chunk(b""))
                if watch is not None:
                    watch.attach(conn)
                resp = conn.getresponse()
                if reused and resp.status == 408 and rest is None:
                    self.release(conn, None)  # an idle timeout's answer, not this request's
                    continue
                return conn, resp
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.release(conn, None)
                if not reused or (watch is not None and watch.gone):
                    raise
            except BaseException:
                self.release(conn, None)
                raise

    def _checkout(self, fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            while self._idle and not fresh:
                conn, since = self._idle.pop()
                if time.monotonic() - since < IDLE_SECONDS and _quiet(conn):
                    self._busy.add(conn)
                    return conn, True
                conn.close()
            conn = _connect(self.upstream, self.timeout, self._tls)
            self._busy.add(conn)
            return conn, False

    def release(self, conn: http.client.HTTPConnection,
                finished: http.client.HTTPResponse | None) -> None:
        """Done with ``conn``: kept for the next request only if ``finished`` was framed and
        read to its end, and the upstream has written nothing after it."""
        framed = finished is not None and (
            finished.isclosed() or (finished.length == 0 and not finished.chunked))
        if finished is not None:
            finished.close()  # the response only; the socket stays open
        with self._lock:
            self._busy.discard(conn)
            keep = framed and _quiet(conn) and not self.stopping.is_set() and len(
                self._idle) < MAX_IDLE
            if keep:
                self._idle.append((conn, time.monotonic()))
            self._lock.notify_all()
        if not keep:
            conn.close()

    def close(self) -> None:
        """Stop: streams still open are given :data:`STOP_GRACE` seconds to end on their own
        (a client that has read its answer's last event leaves before the upstream's body
        has ended), then cut (their captures kept and marked), then the listener closes."""
        self.stopping.set()
        with self._lock:
            self._lock.wait_for(lambda: not self._busy, timeout=STOP_GRACE)
            self.cutting.set()
            for conn in self._busy:
                if conn.sock is not None:
                    with contextlib.suppress(OSError):
                        conn.sock.shutdown(socket.SHUT_RDWR)
            self._lock.wait_for(lambda: not self._busy, timeout=5)
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()
        super().close()

    def new_capture(self, path: str, suffix: str) -> Path:
        """A capture name for ``path`` (:func:`.saving.new_capture`)."""
        return new_capture(self.out, path, suffix, self._next)

    def done(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)
        if self.log is not None:
            self.log(exchange)


class _Saved:
    """The copy of one response kept in the proxy's folder, opened at its first read (so
    the first read reaches the client first), or at the end for an empty body."""

    def __init__(self, proxy: RecordingProxy, target: str, suffix: str,
                 encoding: str | None, secrets: list[str]) -> None:
        self._new = lambda: proxy.new_capture(target, suffix)
        self._args = (encoding, proxy.clock, secrets)
        self.where: Path | None = None
        self.recorder: BodyRecorder | None = None
        self.note: str | None = None

    def _open(self) -> None:
        if self.where is None:
            self.where = where = self._new()
            try:
                self.recorder = BodyRecorder(where, *self._args)
            except BodyNotSaved as e:
                in_progress(where).unlink()
                self.note = f"not saved: {e}"

    def feed(self, raw: bytes, now: float) -> None:
        self._open()
        if self.recorder is not None:
            try:
                self.recorder.feed(raw, now)
            except BodyNotSaved as e:
                self.recorder, self.note = None, f"not saved: {e}"

    def close(self, exchange: Exchange) -> tuple[Path, Exchange]:
        """Finish the files; where the meta.json goes, and ``exchange`` with what was saved
        and why it ends early."""
        self._open()
        assert self.where is not None
        rec = self.recorder
        if rec is not None:
            try:
                rec.finish()
            except BodyNotSaved as e:
                self.recorder, self.note = rec = None, f"not saved: {e}"
        if rec is None:
            return self.where, replace(exchange, note=self.note)
        return self.where, replace(exchange, capture=rec.out, nbytes=rec.nbytes,
                                   nreads=len(rec.reads), cut_off=exchange.cut_off or rec.cut)

    def commit(self) -> None:
        """The capture under its own name, after its completion record is written."""
        if self.recorder is not None:
            self.recorder.commit()


class _Watch:
    """While one request waits on the upstream: a client that closes its connection has
    the upstream connection shut at once (a silent upstream would hold it open until its
    next byte, or the timeout). A client that sends more (its next request) is not leaving:
    watching stops there."""

    def __init__(self, client: socket.socket) -> None:
        self._lock = threading.Lock()
        self._conn: http.client.HTTPConnection | None = None
        self._done = False
        self.gone = False
        self._wake, wake = socket.socketpair()
        threading.Thread(target=self._run, args=(client, wake), daemon=True,
                         name="proxy-watch").start()

    def _run(self, client: socket.socket, wake: socket.socket) -> None:
        with wake:
            try:
                ready = select.select([client, wake], [], [])[0]
                if wake in ready or isinstance(client, ssl.SSLSocket) or client.recv(
                        1, socket.MSG_PEEK):  # (no peek under TLS: a byte may be its own)
                    return
            except (OSError, ValueError):
                pass  # reset or closed: gone as well
            # A client that read its answer's last event may leave before the body's end
            # (a chunked stream's last chunk): the upstream gets a moment to end it.
            with contextlib.suppress(OSError, ValueError):
                if select.select([wake], [], [], GONE_GRACE)[0]:
                    return
            with self._lock:
                if self._done:
                    return
                self.gone = True
                self._shut()

    def _shut(self) -> None:
        if self._conn is not None and self._conn.sock is not None:
            with contextlib.suppress(OSError):
                self._conn.sock.shutdown(socket.SHUT_RDWR)

    def attach(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._conn = conn
            if self.gone:
                self._shut()

    def stop(self) -> None:
        """The exchange is over: the connection is never touched again from here."""
        with self._lock:
            if self._done:
                return
            self._done = True
        with contextlib.suppress(OSError):
            self._wake.send(b"x")
        self._wake.close()


class _Handler(StrictHandler):
    server: OwnedHTTPServer
    disable_nagle_algorithm = True  # each read goes out at once, not held for an ACK
    timeout = 600.0  # a client silent this long (mid-request or idle) is disconnected
    kept_upstream = False
    """Whether the current request's upstream connection went back to the pool."""

    def do_GET(self) -> None:
        self._proxy()

    def refuse(self, status: int, reason: str) -> None:
        """Refused, and logged as an exchange (the path's query values blanked)."""
        super().refuse(status, reason)
        path = provenance.scrub_url("http://x" + (getattr(self, "path", "") or "/"))
        self.server.owner.done(Exchange(getattr(self, "command", "") or "?",
                                        path.removeprefix("http://x"), status, None, 0, 0,
                                        None, f"refused: {reason}"))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def _request_body(self, proxy: RecordingProxy) -> tuple[bytes, Iterator[bytes] | None]:
        """The body up to :data:`HELD` bytes, and the pieces after it, still to be read
        (None: that was all)."""
        frame = self.framing
        it = http1.pieces(self.rfile, frame, max_body=proxy.max_body)
        if not frame.chunked and frame.length <= HELD:
            return b"".join(it), None
        held = bytearray()
        for piece in it:
            held += piece
            if len(held) >= HELD:
                return bytes(held), it
        return bytes(held), None

    def _proxy(self) -> None:
        proxy: RecordingProxy = self.server.owner
        method = self.command
        target = self.path
        if "://" in target.split("?", 1)[0]:  # absolute form: keep path and query
            parts = urlsplit(target)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            body, rest = self._request_body(proxy)
        except http1.BadMessage as e:
            self.refuse(e.status, e.reason)
            return
        # what the client authenticated with: every part of every credential header,
        # key-like query values, values under secret-named keys of a JSON or form body
        secrets = provenance.exchange_secrets(target, body, list(self.headers.items()))
        if rest is not None:  # the pieces after the held ones are searched as they pass
            rest = _searched(rest, secrets)
            length = None if self.framing.chunked else self.framing.length
        else:
            length = len(body)
        sent = proxy.upstream_headers(method, list(self.headers.items()), length)
        safe_path = provenance.scrub_url("http://x" + target, secrets).removeprefix("http://x")
        upgrade = rest is None and websocket.is_upgrade(self.headers.items())
        if upgrade:  # the handshake goes up whole; no compression offered (module docstring)
            sent = [(k, v) for k, v in sent if k.lower() != websocket.EXTENSIONS]
            sent += [("Connection", "Upgrade"), ("Upgrade", "websocket")]
            rest = iter(())  # on a connection of its own: it becomes the session's
        watch = _Watch(self.connection)
        self.sent_at = proxy.clock()  # time to first chunk counts from here (OpenTelemetry's)
        self.whole_body = rest is None or upgrade
        try:
            conn, resp = proxy.send(method, target, sent, body, rest, watch)
        except http1.BadMessage as e:  # the rest of a long body broke its framing
            watch.stop()
            self.refuse(e.status, e.reason)
            return
        except http.client.InvalidURL:
            watch.stop()
            self.send_error(400, "a request target that cannot be forwarded")
            return
        except (OSError, http.client.HTTPException) as e:  # TLS failures included
            watch.stop()
            # As a dead upstream would: no answer, the connection closed.
            self.close_connection = True
            why = "the client left before the answer" if watch.gone else \
                f"upstream: {type(e).__name__}"
            proxy.done(Exchange(method, safe_path, None, None, 0, 0, None, why))
            return
        except ValueError:  # http.client refuses a header value (a control character, say)
            watch.stop()
            self.send_error(400, "a request header that cannot be forwarded")
            return
        self.kept_upstream = False
        try:
            if upgrade and resp.status == 101:
                _Session(self, proxy, conn, resp, target, safe_path, sent, secrets,
                         watch).run()
                return
            self._relay(proxy, conn, resp, method, target, safe_path, body, sent, secrets,
                        watch)
        finally:
            watch.stop()
            if not self.kept_upstream:
                proxy.release(conn, None)

    def _relay(self, proxy: RecordingProxy, conn: http.client.HTTPConnection,
               resp: http.client.HTTPResponse, method: str, target: str, safe_path: str,
               body: bytes, sent: list[tuple[str, str]], secrets: list[str],
               watch: _Watch) -> None:
        headers = resp.getheaders()
        try:  # an upstream's framing read one way only, or its connection is not trusted
            http1.check_response(headers, resp.version)
        except http1.BadMessage as e:
            self.refuse(502, f"the upstream's answer is framed ambiguously: {e.reason}")
            return
        has_body = method != "HEAD" and resp.status not in (204, 304) and resp.status >= 200
        length = resp.getheader("content-length")
        chunked = (has_body and (length is None or resp.chunked)
                   and self.request_version != "HTTP/1.0")
        self.send_response_only(resp.status, resp.reason)
        for name, value in _forwardable(headers):
            if not (chunked and name.lower() == "content-length"):
                self.send_header(name, value)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        elif has_body and length is None:
            self.close_connection = True  # HTTP/1.0: the body ends when the connection does
        self.end_headers()

        suffix = stream_suffix(resp.getheader("content-type"), target,
                               resp.getheader(DATA_STREAM_HEADER))
        if suffix is None and proxy.save_all:
            ctype = (resp.getheader("content-type") or "").lower()
            suffix = ".json" if "json" in ctype else ".body"
        saved = _Saved(proxy, target, suffix, resp.getheader("content-encoding"), secrets) \
            if has_body and suffix is not None else None
        cut: str | None = None
        left = False  # the client is gone: the body is still read, to its end or the watch's
        last: bytes = b""  # a sized body's final read: sent once the capture is on disk
        first_at: float | None = None
        while has_body:
            try:
                raw = resp.read1(READ_SIZE)
            except TimeoutError:
                cut = f"upstream sent nothing for {proxy.timeout:g} s"
                break
            except (OSError, http.client.HTTPException) as e:
                cut = "the client closed the connection" if watch.gone or left else \
                    f"upstream: {type(e).__name__}"
                break
            now = proxy.clock()
            if not raw and watch.gone:
                cut = "the client closed the connection"
                break
            if not raw:
                if resp.length:  # a declared length not reached
                    cut = "the client closed the connection" if left else \
                        "upstream: IncompleteRead"
                break
            if not resp.chunked and resp.length == 0:
                last = raw
            elif not left:
                try:
                    self.wfile.write(chunk(raw) if chunked else raw)
                except OSError:  # the capture goes on: the watch shuts a body that never ends
                    left = True
            if first_at is None:
                first_at = now
            if saved is not None:
                saved.feed(raw, now)
            if last:
                break
        if proxy.cutting.is_set() and (cut or not (resp.chunked or resp.length is not None)):
            cut = "the proxy was stopped"
        # The capture is complete on disk before the client sees its response end.
        exchange = Exchange(method, safe_path, resp.status, None, 0, 0, cut)
        if saved is not None:
            where, exchange = saved.close(exchange)
            wait = None if first_at is None else round(first_at - self.sent_at, 6)
            self._write_meta(proxy, where, resp, method, target, safe_path, body, sent,
                             secrets, exchange.cut_off, exchange.note, wait)
            saved.commit()
        proxy.done(exchange)
        if cut is not None:
            self.close_connection = True  # the client sees the break where it happened
            return
        if not resp.will_close:  # ready for the client's next request before it can send it
            watch.stop()  # before the pool has it: a client leaving now is no reason to shut it
            self.kept_upstream = True
            proxy.release(conn, resp)
        try:
            self.wfile.write(last + (chunk(b"") if chunked else b""))
        except OSError:
            self.close_connection = True

    def _write_meta(self, proxy: RecordingProxy, capture: Path, resp: http.client.HTTPResponse,
                    method: str, target: str, safe_path: str, body: bytes,
                    sent: list[tuple[str, str]], secrets: list[str], cut: str | None,
                    note: str | None, wait: float | None,
                    more: dict[str, object] | None = None) -> None:
        up = proxy.upstream
        meta = provenance.exchange(
            "proxy", f"{up.scheme}://{up.netloc}{proxy.prefix}{target}", method, resp.status,
            sent, resp.getheaders(), secrets, cut_off=cut, path=safe_path,
            model=model_of(target, body), **(more or {}))
        if wait is not None:
            meta["request_to_first_byte"] = wait
        if note:
            meta["not_saved"] = note
        # the request the stream answered (its tools and messages), without its credentials;
        # beside a saved capture only
        if note:
            why = None
        elif self.whole_body:
            why = provenance.write_request(capture, body, secrets)
        else:
            why = "the request body was too long to hold (it was forwarded as it came)"
        if why:
            meta["request_not_kept"] = why
        try:
            provenance.write(capture, meta, secrets)
        except ValueError:  # a credential turned up in the model name, say
            meta["model"] = None
            if "websocket" in meta:  # a Close reason, say
                meta["websocket"] = {"not_kept": "the session's details held a credential"}
            provenance.write(capture, meta, secrets)


class _Session:
    """One WebSocket session (:mod:`.websocket`): the upstream's 101 relayed, then each
    side's bytes relayed to the other as they come (the server's on this thread, the
    client's on another), each whole message a line of the capture."""

    def __init__(self, handler: _Handler, proxy: RecordingProxy,
                 conn: http.client.HTTPConnection, resp: http.client.HTTPResponse,
                 target: str, safe_path: str, sent: list[tuple[str, str]],
                 secrets: list[str], watch: _Watch) -> None:
        self.h, self.proxy, self.conn, self.resp = handler, proxy, conn, resp
        self.target, self.safe_path, self.sent, self.secrets = target, safe_path, sent, secrets
        self.watch = watch
        self.sides = {side: websocket.Messages(side, masked=side == "client",
                                               max_message=proxy.max_message)
                      for side in ("server", "client")}
        self.saved = _Saved(proxy, target, websocket.SUFFIX, None, secrets)
        self.lock = threading.Lock()
        self.lines = 0
        self.counts = dict.fromkeys(self.sides, 0)
        self.problems: list[dict[str, object]] = []
        self.flattened = 0
        self.first_at: float | None = None
        self.failed: str | None = None  # a read that failed (not an end)
        self.server_done = threading.Event()
        self.client_done = threading.Event()
        self.client_left = False  # before the server ended: the upstream was shut for it
        self.active = time.monotonic()  # the last read of either side

    def run(self) -> None:
        h, resp = self.h, self.resp
        self.watch.stop()
        h.close_connection = True  # the connection is the session's, to its end
        headers = resp.getheaders()
        try:
            http1.check_response(headers, resp.version)
        except http1.BadMessage as e:
            h.refuse(502, f"the upstream's answer is framed ambiguously: {e.reason}")
            return
        key = next((v for k, v in h.headers.items() if k.lower() == "sec-websocket-key"), None)
        why = websocket.refusal(key, resp.status, headers)
        h.send_response_only(resp.status, resp.reason)
        for name, value in headers:
            h.send_header(name, value)
        h.end_headers()
        if why is not None:  # as it came, and no session: the client refuses it
            self.proxy.done(Exchange(h.command, self.safe_path, resp.status, None, 0, 0,
                                     None, why))
            return
        # A side that only listens (a client streaming audio to a quiet server) is no idle
        # session: reads wait as long as it takes, and the watch ends one where neither speaks.
        assert self.conn.sock is not None
        self.conn.sock.settimeout(None)
        h.untimed()
        for work, name in ((self._client, "proxy-ws-client"), (self._idle, "proxy-ws-idle")):
            threading.Thread(target=work, daemon=True, name=name).start()
        self._pump("server", lambda: resp.fp.read1(READ_SIZE), h.wfile.write)
        self.server_done.set()
        if not self.client_done.wait(GONE_GRACE):  # the client's Close reply, then its end
            _shut(h.connection)
            self.client_done.wait()
        self._finish()

    def _client(self) -> None:
        sock = self.conn.sock
        assert sock is not None
        try:
            self._pump("client", lambda: self.h.rfile.read1(READ_SIZE), sock.sendall)
            if not self.server_done.wait(GONE_GRACE):  # the client left: so does the upstream
                self.client_left = True
                _shut(sock)
        finally:
            self.client_done.set()

    def _idle(self) -> None:
        timeout = self.proxy.timeout
        while not self.client_done.wait(min(1.0, timeout / 4)):
            if time.monotonic() - self.active > timeout and not self.server_done.is_set():
                self.failed = self.failed or f"neither side sent anything for {timeout:g} s"
                _shut(self.h.connection)
                if self.conn.sock is not None:
                    _shut(self.conn.sock)
                return

    def _pump(self, side: str, read: Callable[[], bytes],
              write: Callable[[bytes], object]) -> None:
        """Relay ``side``'s bytes to the other until it ends. Each read's whole messages
        are saved before it is sent on: the other side's answer to one can only come after,
        so the capture keeps the order the messages passed in."""
        while True:
            try:
                data = read()
            except (OSError, ValueError) as e:  # reset, or shut by the other side's end
                if side == "server":
                    self.failed = self.failed or f"upstream: {type(e).__name__}"
                return
            if not data:
                return
            self.active = time.monotonic()
            self._save(self.sides[side].feed(data))
            try:
                write(data)
            except OSError:
                return  # the other side is gone: its own read ends the session

    def _save(self, messages: list[websocket.Message]) -> None:
        for message in messages:
            now = self.proxy.clock()
            raw, why, flat = websocket.line(message)
            with self.lock:
                self.lines += 1
                self.counts[message.source] += 1
                self.flattened += flat
                if why is not None:
                    self.problems.append({"line": self.lines, "source": message.source,
                                          "problem": why})
                if self.first_at is None and message.source == "server":
                    self.first_at = now
                self.saved.feed(raw, now)

    def _finish(self) -> None:
        proxy, h = self.proxy, self.h
        ends = [s.unfinished() for s in self.sides.values()]
        closed = any(m.closed is not None for m in self.sides.values())
        if self.client_left and not closed:
            self.failed = "the client closed the connection"
        elif closed and self.failed and self.failed.startswith("upstream:"):
            self.failed = None  # a reset after a Close frame ends nothing: the session was over
        cut = ("the proxy was stopped" if proxy.cutting.is_set() else None) or \
            self.failed or next((e for e in ends if e is not None), None)
        exchange = Exchange(h.command, self.safe_path, 101, None, 0, 0, cut)
        where, exchange = self.saved.close(exchange)
        offered = [v for k, v in h.headers.items() if k.lower() == websocket.EXTENSIONS]
        session: dict[str, object] = {
            "messages": self.counts,
            "close": {side: m.closed for side, m in self.sides.items()},
            "control_frames": {side: m.controls for side, m in self.sides.items()},
        }
        if offered:
            session["extensions_removed"] = offered
        if self.flattened:
            session["line_breaks_made_spaces"] = self.flattened
        if self.problems:
            session["problems"] = self.problems
        wait = None if self.first_at is None else round(self.first_at - h.sent_at, 6)
        h._write_meta(proxy, where, self.resp, h.command, self.target, self.safe_path, b"",
                      self.sent, self.secrets, exchange.cut_off, exchange.note, wait,
                      {"websocket": session})
        self.saved.commit()
        proxy.done(replace(exchange, nreads=self.lines))


def _shut(sock: socket.socket) -> None:
    """Both ways, at the socket (under any TLS): a blocked read on it ends at once."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _searched(pieces: Iterator[bytes], secrets: list[str]) -> Iterator[bytes]:
    """``pieces`` as they pass, each searched for credentials (added to ``secrets``) with
    the end of the one before, so a key cut between two is found too."""
    tail = b""
    for piece in pieces:
        window = tail + piece
        secrets += [s for s in provenance.body_secrets(window) if s not in secrets]
        tail = window[-4096:]
        yield piece


def _forwardable(headers: list[tuple[str, str]], *also: str) -> list[tuple[str, str]]:
    """Headers as they came, less hop-by-hop ones, those the ``Connection`` header names,
    ``Host`` and ``also``."""
    drop = HOP_BY_HOP | {"host", *also} | {
        t.strip().lower() for k, v in headers if k.lower() == "connection" for t in v.split(",")}
    return [(k, v) for k, v in headers if k.lower() not in drop]
