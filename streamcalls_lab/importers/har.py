"""HAR archives (browser DevTools, mitmproxy, proxies): entries whose response is an event stream.

The body is ``response.content.text``, base64-decoded when ``encoding`` says
so; it is what the browser received after undoing any compression, which is
what a capture is. HAR's standard ``timings`` only give the total receive
time, which cannot place reads, so no sidecar comes from them. When an entry
carries per-event times (Chrome's ``_eventSourceMessages``, ``time`` in
seconds) and they line up one-to-one with the body's frames, each frame
becomes one timed read. An entry with messages but no body text is rebuilt
from the messages (framing not as sent; the provenance says so).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import provenance, timing
from ..errors import CaptureError
from ..framing.sse import sse_body, sse_frame
from .stream import Stream, exchanges, frame_reads
from .vcr import is_event_stream

REBUILT = "framing rebuilt from the HAR's _eventSourceMessages: not as sent"


def _pairs(headers: Any) -> list[tuple[str, str]]:
    if not isinstance(headers, list):
        return []
    return [(str(h.get("name", "")), str(h.get("value", ""))) for h in headers
            if isinstance(h, dict)]


def _header(pairs: list[tuple[str, str]], name: str) -> str:
    return ", ".join(v for k, v in pairs if k.lower() == name)


def _text(content: dict[str, Any], where: str) -> bytes | None:
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error:
            raise CaptureError(where, 0, "content.text is not valid base64") from None
    return text.encode("utf-8")


def _messages(entry: dict[str, Any]) -> list[dict[str, Any]]:
    found = entry.get("_eventSourceMessages")
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


def _from_messages(messages: list[dict[str, Any]], where: str) -> bytes:
    """The SSE body the browser's parsed messages came from (its framing is lost)."""
    out = []
    for i, m in enumerate(messages):
        name = m.get("eventName") or m.get("type")
        try:
            out.append(sse_frame(str(m.get("data", "")),
                                 str(name) if name and name != "message" else None,
                                 id=str(m["eventId"]) if m.get("eventId") else None))
        except ValueError as e:  # a name or id SSE cannot carry: no frame would say it
            raise CaptureError(where, 0, f"_eventSourceMessages[{i}]: {e}") from None
    return sse_body(out)


def _times(messages: list[dict[str, Any]], where: str) -> list[float] | None:
    times = [m.get("time") for m in messages]
    if not times or not all(isinstance(t, int | float) for t in times):
        return None
    t0 = float(times[0])  # type: ignore[arg-type]
    for i, t in enumerate(times):  # replay sleeps out the gaps: each must be a clock reading
        why = timing.problem(float(t) - t0) if math.isfinite(t0) else timing.problem(t0)  # type: ignore[arg-type]
        if why is not None:
            raise CaptureError(where, 0, f"_eventSourceMessages[{i}]: {why}")
    return [float(t) for t in times]  # type: ignore[arg-type]


def streams(path: Path) -> Iterator[Stream]:
    """One :class:`Stream` per entry whose response is ``text/event-stream``."""
    try:
        har = json.loads(path.read_bytes())
        entries = har["log"]["entries"]
    except (ValueError, KeyError, TypeError):
        raise CaptureError(str(path), 0, "not a HAR file: no log.entries") from None
    stem = path.name.removesuffix(path.suffix)
    for i, entry, request, response in exchanges(entries):
        content = response.get("content") or {}
        resp_headers = _pairs(response.get("headers"))
        req_headers = _pairs(request.get("headers"))
        ctype = _header(resp_headers, "content-type") or str(content.get("mimeType") or "")
        if not is_event_stream(ctype, b""):
            continue
        body = _text(content, f"{path} entry {i}")
        messages = _messages(entry)
        rebuilt = not body and bool(messages)
        if rebuilt:
            body = _from_messages(messages, f"{path} entry {i}")
        if not body:
            continue
        times = _times(messages, f"{path} entry {i}")
        reads = frame_reads(body, times) if times else None
        url = str(request.get("url", ""))
        post = request.get("postData")
        secrets = provenance.exchange_secrets(
            url, post.get("text") if isinstance(post, dict) else None, req_headers, resp_headers)
        params = post.get("params") if isinstance(post, dict) else None  # a form, parsed
        for q in (request.get("queryString") or []) + (params if isinstance(params, list) else []):
            if isinstance(q, dict) and provenance.is_secret_param(str(q.get("name", ""))):
                secrets.append(str(q.get("value", "")))
        for cookie in (request.get("cookies") or []) + (response.get("cookies") or []):
            if isinstance(cookie, dict):
                secrets.append(str(cookie.get("value", "")))
        meta: dict[str, Any] = {
            "source": "har",
            "origin": path.name,
            "entry": f"log/entries/{i}",
            "method": request.get("method"),
            "url": provenance.scrub_url(url, secrets),
            "status": response.get("status"),
            "started": entry.get("startedDateTime"),
            "request_headers": provenance.scrub_headers(req_headers, secrets),
            "response_headers": provenance.scrub_headers(resp_headers, secrets),
        }
        if isinstance(entry.get("timings"), dict):
            meta["receive_ms"] = entry["timings"].get("receive")
        if rebuilt:
            meta["note"] = meta["rebuilt"] = REBUILT
        yield Stream(f"{stem}__e{i}", body, reads, meta, secrets)
