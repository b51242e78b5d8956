"""claude-trace logs (``.claude-trace/log-*.jsonl``): Claude Code's API exchanges, one a line.

Each line is a pair ``{"request": {timestamp, method, url, headers, body}, "response":
{timestamp, status_code, headers, body | body_raw}, "logged_at"}``. A streamed response
keeps its whole SSE text in ``body_raw``: the text the interceptor decoded read by read,
so the events are all there but the bytes are not guaranteed to be the wire's (a UTF-8
character split across two reads can come out as U+FFFD), and no read timing survives.
The provenance says so. A response with a parsed ``body`` (not streamed) is no capture.
Request headers (``authorization``, ``x-api-key``) and secret-named keys in the request
body are collected as the exchange's secrets, so none of them is ever written out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .. import _deepjson as deepjson
from .. import provenance
from ..errors import CaptureError
from .stream import Stream
from .vcr import is_event_stream

NOTE = ("body_raw as claude-trace decoded it: not guaranteed byte-exact (a character split "
        "between reads may be mangled), no read timing")


def is_trace_line(payload: Any) -> bool:
    """A claude-trace pair: a request with a URL and a response with a status code."""
    if not isinstance(payload, dict):
        return False
    request, response = payload.get("request"), payload.get("response")
    return (isinstance(request, dict) and "url" in request
            and (response is None or (isinstance(response, dict) and "status_code" in response)))


def _headers(raw: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def streams(path: Path) -> Iterator[Stream]:
    """One :class:`Stream` per logged exchange whose response was streamed (``body_raw``)."""
    stem = path.name.removesuffix(path.suffix)
    at = 0
    for n, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
        start, at = at, at + len(line)
        if not line.strip():
            continue
        try:
            pair = deepjson.parse(line)
        except orjson.JSONDecodeError as e:
            raise CaptureError(str(path), start, f"line {n} is not JSON: {e}") from None
        if not is_trace_line(pair):
            raise CaptureError(str(path), start,
                               f"line {n} is not a claude-trace pair (request, response)")
        request, response = pair["request"], pair.get("response") or {}
        text = response.get("body_raw")
        resp_headers = _headers(response.get("headers"))
        ctype = next((v for k, v in resp_headers.items() if k.lower() == "content-type"), "")
        if not isinstance(text, str) or not is_event_stream(ctype, text.encode("utf-8")):
            continue
        req_headers = _headers(request.get("headers"))
        url = str(request.get("url", ""))
        req_body = request.get("body")
        body_text = req_body if isinstance(req_body, str) else json.dumps(req_body)
        secrets = provenance.exchange_secrets(url, body_text, req_headers, resp_headers)
        meta: dict[str, Any] = {
            "source": "claude-trace",
            "origin": path.name,
            "entry": f"line {n}: response.body_raw",
            "method": request.get("method"),
            "url": provenance.scrub_url(url, secrets),
            "status": response.get("status_code"),
            "started": request.get("timestamp"),
            "request_headers": provenance.scrub_headers(req_headers, secrets),
            "response_headers": provenance.scrub_headers(resp_headers, secrets),
            "note": NOTE,
        }
        body = text.encode("utf-8", "surrogatepass")
        yield Stream(f"{stem}__l{n}", body, None, meta, secrets)
