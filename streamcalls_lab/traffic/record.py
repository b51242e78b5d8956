"""Record a live stream: POST a request body, keep the response bytes exactly, time every read.

The API key comes from an environment variable and goes into one request
header, nowhere else: not the capture, not the timing or provenance
sidecars, not a log line, not an error message (errors are rebuilt from
scrubbed parts, never from the HTTP library's own text, which can quote a
header). A credential passed as ``--header`` is refused for the same reason:
it would sit in shell history.

The stdlib HTTP client is used on purpose: it reads the socket exactly as
the response arrives (``read1``), adds no retries, and logs nothing. An answer
whose framing can be read two ways (:func:`.http1.check_response`) is refused,
and a gzip body inflates no further than :data:`~streamcalls_lab._inflate.MAX_INFLATED`.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import provenance
from . import _http1 as http1
from ._saving import BodyNotSaved, BodyRecorder
from .replay import Clock

AUTH_MODES = ("auto", "x-api-key", "bearer", "api-key", "x-goog-api-key", "none")
ANTHROPIC_VERSION = "2023-06-01"
_READ_SIZE = 1 << 16


class RecordError(RuntimeError):
    """Recording failed; the message never contains the key."""


@dataclass(frozen=True)
class Recording:
    path: Path
    timing: Path
    meta: Path
    status: int
    content_type: str
    nbytes: int
    nreads: int


HOSTS: tuple[tuple[str, str | None, str], ...] = (
    ("anthropic.com", "ANTHROPIC_API_KEY", "x-api-key"),
    ("openai.com", "OPENAI_API_KEY", "authorization"),
    (".openai.azure.com", None, "api-key"),
    ("googleapis.com", None, "x-goog-api-key"),
)
"""Per provider host suffix: the conventional key variable and the header that carries it."""


def _host_rule(url: str) -> tuple[str | None, str]:
    """(key variable, key header) for ``url``'s host: no variable and ``authorization`` for
    hosts not in :data:`HOSTS`. A suffix matches whole labels only (``evilanthropic.com``
    gets no Anthropic key)."""
    host = "." + (urlsplit(url).hostname or "").lower().rstrip(".")
    return next(((env, header) for suffix, env, header in HOSTS
                 if host.endswith("." + suffix.lstrip("."))), (None, "authorization"))


def default_key_env(url: str) -> str | None:
    """The conventional key variable for a provider's host, or None (no key) for others."""
    return _host_rule(url)[0]


def auth_header(url: str, mode: str = "auto") -> str | None:
    """The header that carries the key: Anthropic ``x-api-key``, Azure ``api-key``, Google
    ``x-goog-api-key``, everyone else ``authorization`` (as ``Bearer <key>``)."""
    if mode not in AUTH_MODES:
        raise ValueError(f"auth must be one of {', '.join(AUTH_MODES)}, not {mode!r}")
    if mode == "auto":
        return _host_rule(url)[1]
    return {"none": None, "bearer": "authorization"}.get(mode, mode)


def _parse_headers(headers: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    items = headers.items() if isinstance(headers, Mapping) else (
        h.split(":", 1) if ":" in h else (h, "") for h in headers
    )
    out: dict[str, str] = {}
    for name, value in items:
        name = name.strip()
        if provenance.is_secret_name(name):
            raise RecordError(
                f"refusing header {name!r}: pass credentials through --key-env, never on the "
                "command line"
            )
        out[name.lower()] = value.strip()
    return out


def _body_bytes(body: bytes | str | Path | Mapping[str, Any]) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, Path):
        return body.read_bytes()
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body).encode("utf-8")


def _key(env: str | None) -> str | None:
    if env is None:
        return None
    value = os.environ.get(env, "").strip()
    if not value:
        raise RecordError(f"environment variable {env} is not set (or empty)")
    if not value.isascii() or not value.isprintable():
        raise RecordError(f"the value of {env} has characters an HTTP header cannot carry")
    return value


def _error_type(raw: bytes, secrets: list[str]) -> str:
    """The provider's error *type* only: messages can quote part of a rejected key."""
    try:
        payload = json.loads(raw)
    except ValueError:
        return "non-JSON body"
    err = payload.get("error") if isinstance(payload, dict) else None
    kind = str(err.get("type") or err.get("code") or "") if isinstance(err, dict) else ""
    if not kind or len(kind) > 80 or any(s in kind for s in secrets):
        return "unknown"
    return kind


def record(
    url: str,
    body: bytes | str | Path | Mapping[str, Any],
    out: str | Path,
    *,
    headers: Mapping[str, str] | Iterable[str] = (),
    key_env: str | None = "auto",
    auth: str = "auto",
    timeout: float = 600.0,
    clock: Clock = time.monotonic,
) -> Recording:
    """POST ``body`` to ``url`` and save the streamed response to ``out`` plus its sidecars.

    ``key_env="auto"`` reads the conventional variable for known hosts
    (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``) and sends no key elsewhere;
    ``auth`` picks the header (see :func:`auth_header`). ``timeout`` bounds
    each wait for data, not the whole stream. A stream cut off mid-way is
    saved as far as it got (a truncated capture is worth studying) and then
    reported as an error.
    """
    out = Path(out)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RecordError("the URL must be http:// or https:// with a host")
    env = default_key_env(url) if key_env == "auto" else key_env
    key = _key(env)
    secrets = ([key] if key else []) + provenance.url_secrets(url)
    safe_url = provenance.scrub_url(url, secrets)
    send = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "accept-encoding": "identity",
        "user-agent": "streamcalls-lab",
    }
    send.update(_parse_headers(headers))
    header = auth_header(url, auth)
    if (parts.hostname or "").endswith("anthropic.com"):
        send.setdefault("anthropic-version", ANTHROPIC_VERSION)
    if key and header:
        send[header] = f"Bearer {key}" if header == "authorization" else key
    data = _body_bytes(body)
    secrets += [s for s in provenance.exchange_secrets(url, data, send) if s not in secrets]
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query

    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        try:
            sent_at = clock()  # time to first chunk counts from here (OpenTelemetry's)
            conn.request("POST", target, body=data, headers=send)
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException, ValueError) as e:
            raise RecordError(f"request to {safe_url} failed: {type(e).__name__}") from None
        try:  # framed one way only, as the proxy holds an upstream to
            http1.check_response(resp.getheaders(), resp.version)
        except http1.BadMessage as e:
            raise RecordError(f"{safe_url} answered with framing that can be read two ways "
                              f"({e.reason}); nothing saved") from None
        if not 200 <= resp.status < 300:
            try:
                raw = resp.read(1 << 16)
            except (OSError, http.client.HTTPException):
                raw = b""
            raise RecordError(f"{safe_url} answered HTTP {resp.status} "
                              f"({_error_type(raw, secrets)}); nothing saved")
        return _save(resp, out, safe_url, send, secrets, clock, sent_at, data)
    finally:
        conn.close()


def _save(
    resp: http.client.HTTPResponse,
    out: Path,
    safe_url: str,
    sent: Mapping[str, str],
    secrets: list[str],
    clock: Clock,
    sent_at: float,
    body: bytes,
) -> Recording:
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        rec = BodyRecorder(out, resp.getheader("content-encoding"), clock, secrets)
    except BodyNotSaved as e:
        raise RecordError(f"{safe_url}: {e}; nothing saved") from None
    cut: str | None = None
    first_at: float | None = None
    try:
        while rec.cut is None:
            try:
                chunk = resp.read1(_READ_SIZE)
            except (OSError, http.client.HTTPException) as e:
                cut = type(e).__name__
                break
            if not chunk:
                break
            now = clock()
            first_at = now if first_at is None else first_at
            rec.feed(chunk, now)
        side = rec.finish()
    except BodyNotSaved as e:  # the body echoed the key: the file is already gone
        raise RecordError(f"{safe_url}: {e}; nothing saved") from None
    cut = cut or rec.cut
    nbytes = rec.nbytes
    if cut and not nbytes:  # nothing to study: no empty capture left behind
        rec.partial.unlink(missing_ok=True)
        side.unlink(missing_ok=True)
        raise RecordError(f"the stream from {safe_url} broke off ({cut}) before its first "
                          "byte; nothing saved")
    meta = provenance.exchange("record", safe_url, "POST", resp.status, sent,
                               resp.getheaders(), secrets, cut_off=cut)
    if first_at is not None:
        meta["request_to_first_byte"] = round(first_at - sent_at, 6)
    why = provenance.write_request(out, body, secrets)
    if why:
        meta["request_not_kept"] = why
    meta_path = provenance.write(out, meta, secrets)
    rec.commit()  # last: a capture under its own name is a whole one
    if cut:
        raise RecordError(
            f"the stream from {safe_url} broke off ({cut}) after {nbytes} bytes; "
            f"the partial capture is saved in {out}"
        )
    return Recording(out, side, meta_path, resp.status, resp.getheader("content-type") or "",
                     nbytes, len(rec.reads))
