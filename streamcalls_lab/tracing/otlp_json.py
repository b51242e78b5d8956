"""OTLP JSON: an ``ExportTraceServiceRequest`` (and ``ExportLogsServiceRequest``, where
instrumentations put their GenAI events) as the OTLP/HTTP JSON encoding writes it, one
document or JSON lines of them (the Collector's file exporter).

Attribute values are ``AnyValue`` objects; one of the wrong shape is a problem recorded on
its span, never a crash. Log records are joined to their span by trace and span id, as
events.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from ..errors import CaptureError
from .attributes import Span, turn
from .records import MAX_SPANS, TracedTurn, json_lines

_SCALARS = {"stringValue": str, "boolValue": bool, "doubleValue": float}


def any_value(value: Any, problems: list[str], key: str) -> Any:
    """An OTLP ``AnyValue`` as a Python value (int64 arrives as a string in JSON)."""
    todo = value
    if not isinstance(todo, dict) or len(todo) > 1:
        if todo == {} or todo is None:
            return None
        problems.append(f"{key}: not an AnyValue")
        return None
    (kind, inner), = todo.items()
    if kind in _SCALARS:
        if isinstance(inner, _SCALARS[kind]) or (kind == "doubleValue"
                                                   and isinstance(inner, int)):
            return inner
    elif kind == "intValue":
        if isinstance(inner, int) and not isinstance(inner, bool):
            return inner
        if isinstance(inner, str) and inner.lstrip("-").isdigit():
            return int(inner)
    elif kind == "bytesValue" and isinstance(inner, str):
        return inner  # base64 as sent: no convention keeps a call in bytes
    elif kind == "arrayValue" and isinstance(inner, dict):
        values = inner.get("values", [])
        if isinstance(values, list):
            return [any_value(v, problems, key) for v in values]
    elif kind == "kvlistValue" and isinstance(inner, dict):
        return attributes(inner.get("values", []), problems, key + ".")
    problems.append(f"{key}: {kind} holding a {type(inner).__name__}")
    return None


def attributes(items: Any, problems: list[str], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(items, list):
        problems.append(f"{prefix or 'attributes'}: not a list")
        return out
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            problems.append(f"{prefix}attribute without a string key")
            continue
        out[item["key"]] = any_value(item.get("value"), problems, prefix + item["key"])
    return out


def _hex(value: Any) -> str:
    """A trace or span id: hex as OTLP JSON writes it (base64, as protobuf's JSON mapping
    writes bytes, is turned to hex so the two encodings agree)."""
    if not isinstance(value, str):
        return ""
    if len(value) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except ValueError:
        return value


def _seconds(value: Any) -> float | None:
    try:
        return int(value) / 1e9 if value not in (None, "", 0, "0") else None
    except (TypeError, ValueError):
        return None


def _list(doc: Any, key: str) -> list[Any]:
    value = doc.get(key, []) if isinstance(doc, dict) else []
    return value if isinstance(value, list) else []


def spans(docs: list[Any], source: str) -> list[Span]:
    """Every span of the documents, normalised, with its log records joined as events."""
    out: list[Span] = []
    logs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for doc in docs:
        if not isinstance(doc, dict) or not ({"resourceSpans", "resourceLogs"} & doc.keys()):
            raise CaptureError(source, 0, "not an OTLP export (no resourceSpans or "
                               "resourceLogs)")
        for rs in _list(doc, "resourceSpans"):
            for ss in _list(rs, "scopeSpans"):
                for s in _list(ss, "spans"):
                    if not isinstance(s, dict):
                        continue
                    if len(out) >= MAX_SPANS:
                        raise CaptureError(source, 0, f"more than {MAX_SPANS} spans")
                    problems: list[str] = []
                    events = [{"name": e.get("name", ""), "time": _seconds(e.get("timeUnixNano")),
                               "attributes": attributes(e.get("attributes", []), problems)}
                              for e in _list(s, "events") if isinstance(e, dict)]
                    out.append({"name": s.get("name", ""), "trace_id": _hex(s.get("traceId")),
                                "span_id": _hex(s.get("spanId")),
                                "start": _seconds(s.get("startTimeUnixNano")),
                                "attributes": attributes(s.get("attributes", []), problems),
                                "events": events, "problems": problems})
        for rl in _list(doc, "resourceLogs"):
            for sl in _list(rl, "scopeLogs"):
                for r in _list(sl, "logRecords"):
                    if not isinstance(r, dict):
                        continue
                    problems = []
                    attrs = attributes(r.get("attributes", []), problems)
                    name = r.get("eventName") or attrs.get("event.name") or ""
                    body = any_value(r.get("body"), problems, "body")
                    logs.setdefault((_hex(r.get("traceId")), _hex(r.get("spanId"))), []).append(
                        {"name": name, "time": _seconds(r.get("timeUnixNano")),
                         "attributes": attrs, "body": body, "problems": problems})
    out = list({(s["trace_id"], s["span_id"]): s for s in out}.values())  # two exporters
    for span in out:
        for record in logs.pop((span["trace_id"], span["span_id"]), []):
            span["events"].append(record)
            span["problems"] += record.pop("problems")
    return out


def turns_of(docs: list[Any], source: str) -> list[TracedTurn]:
    found = [turn(s, source) for s in spans(docs, source)]
    return sorted((t for t in found if t is not None), key=lambda t: t.start or 0.0)


def read(path: str | Path) -> list[TracedTurn]:
    """The traced turns of an OTLP JSON (or JSON lines) export."""
    path = Path(path)
    return turns_of(json_lines(path.read_bytes(), str(path)), str(path))
