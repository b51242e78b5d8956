"""VCR cassettes (vcrpy's YAML or JSON): the streamed response bodies, byte-exact.

A cassette is ``interactions[]``, each a ``request`` and a ``response`` whose
body sits in ``body.string``: text, or ``!!binary`` bytes when the recorder
kept them compressed (gzip or deflate, undone here, as the client would, up to
:data:`~streamcalls_lab._inflate.MAX_INFLATED`: a body that expands further is
kept that far and marked ``cut_off``). Only interactions whose response is an
event stream become captures; cassettes keep no timing, so no sidecar is written.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .. import provenance
from .._inflate import Inflater
from ..errors import CaptureError
from .stream import Stream, exchanges

EVENT_STREAM = "text/event-stream"
_SSE_STARTS = (b"event:", b"data:", b"id:", b":", b"retry:")


def _headers(raw: Any) -> dict[str, list[str]]:
    """vcrpy keeps ``name: [values]``; some recorders a plain value."""
    out: dict[str, list[str]] = {}
    if isinstance(raw, dict):
        for name, value in raw.items():
            values = value if isinstance(value, list) else [value]
            out.setdefault(str(name).lower(), []).extend(str(v) for v in values)
    return out


def _body(response: dict[str, Any]) -> bytes | None:
    body = response.get("body", response.get("content"))
    if isinstance(body, dict):
        body = body.get("string", body.get("base64_string"))
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes):
        return body
    return None


def decode_content(body: bytes, encoding: str) -> tuple[bytes, str | None] | None:
    """Undo a ``content-encoding`` the recorder kept: the body and, when it expands past
    the limit, why it stops there (see :mod:`streamcalls_lab._inflate`); None for
    encodings this kit cannot undo. A corrupt or cut-off compressed body raises.

    The header often outlives the encoding (many recorders store decoded
    text under ``content-encoding: gzip``), so the bytes decide, not the header.
    Each coding the header lists (``gzip, gzip``) is a layer undone in turn, every one
    held to the limit; one that stops at it is the end (what is inside cannot be read).
    """
    codings = [c.strip().lower() for c in encoding.split(",")]
    cut: str | None = None
    for coding in reversed([c for c in codings if c not in ("", "identity")] or [""]):
        if body[:2] == b"\x1f\x8b":
            kind = "gzip"
        elif _is_text(body):
            return body, cut
        elif coding == "deflate":
            kind = "deflate"  # zlib, or raw deflate as some servers send it
        else:
            return None
        if cut is not None:  # an outer layer stopped at the limit: this one is cut off
            raise ValueError(f"an outer layer is cut: {cut}")
        inf = Inflater(kind)
        body = b"".join(inf.feed(body)) + inf.flush()
        if not inf.eof:
            raise ValueError("the compressed body is cut off before its end")
        cut = inf.cut
    if body[:2] == b"\x1f\x8b":  # still compressed: more layers than the header names
        return None
    return body, cut


def _is_text(body: bytes) -> bool:
    head = body[:256]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:  # not just a character cut at the window's edge
            return False
    return b"\0" not in head


def is_event_stream(content_type: str, body: bytes) -> bool:
    """By the content type, or, where a recorder dropped the headers, by the first line."""
    if content_type:
        return content_type.split(";")[0].strip().lower() == EVENT_STREAM
    return body.lstrip(b"\xef\xbb\xbf\r\n").startswith(_SSE_STARTS)


def _load(path: Path) -> Any:
    text = path.read_bytes()
    if path.suffix.lower() == ".json":
        return json.loads(text)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise CaptureError(str(path), 0, f"not a YAML cassette ({mark or e})") from None


def streams(path: Path) -> Iterator[Stream]:
    """One :class:`Stream` per interaction whose response is an event stream."""
    data = _load(path)
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list):
        raise CaptureError(str(path), 0, "not a VCR cassette: no 'interactions' list")
    stem = path.name.removesuffix(path.suffix)
    for i, _, request, response in exchanges(interactions):
        headers = _headers(response.get("headers"))
        body = _body(response)
        if body is None:
            continue
        content_type = ", ".join(headers.get("content-type", []))
        if content_type and not is_event_stream(content_type, b""):
            continue
        encoding = ", ".join(headers.get("content-encoding", []))
        undone = decode_content(body, encoding)
        if undone is None:
            warnings.warn(f"{path} interaction {i}: cannot undo content-encoding {encoding!r}",
                          stacklevel=2)
            continue
        decoded, cut = undone
        if not is_event_stream(content_type, decoded):
            continue
        req_headers = _headers(request.get("headers"))
        uri = str(request.get("uri", ""))
        # Ruby's VCR keeps a request body as {encoding, string}, as it does a response's
        secrets = provenance.exchange_secrets(uri, _body(request), req_headers, headers)
        status = response.get("status")
        meta = {
            "source": "vcr",
            "origin": path.name,
            "entry": f"interactions/{i}/response/body/string",
            "method": request.get("method"),
            "url": provenance.scrub_url(uri, secrets),
            "status": status.get("code") if isinstance(status, dict) else status,
            "request_headers": provenance.scrub_headers(req_headers, secrets),
            "response_headers": provenance.scrub_headers(headers, secrets),
        }
        if decoded is not body:
            meta["decoded_from"] = encoding or "gzip"
        if cut:
            meta["cut_off"] = cut
        yield Stream(f"{stem}__i{i}", decoded, None, meta, secrets)
