"""Which reader a trace export needs, decided from its bytes (never its name alone):
OTLP protobuf, OTLP JSON (a document or JSON lines), or a Langfuse export."""

from __future__ import annotations

from pathlib import Path

from ..errors import CaptureError
from . import langfuse, otlp_json, otlp_proto
from .records import MAX_BYTES, TracedTurn, json_lines

READERS = ("otlp-json", "otlp-protobuf", "langfuse")


def kind(raw: bytes) -> str:
    head = raw.lstrip()[:1]
    if head not in (b"{", b"["):
        return "otlp-protobuf"
    return "json"


def read_trace(path: str | Path) -> list[TracedTurn]:
    """The traced turns of one export, in start order; a file no reader can read is a
    :class:`~streamcalls_lab.errors.CaptureError` naming it, the byte and why."""
    path = Path(path)
    if path.stat().st_size > MAX_BYTES:
        raise CaptureError(str(path), MAX_BYTES, f"trace export over {MAX_BYTES} bytes: not read")
    raw = path.read_bytes()
    if not raw.strip():
        raise CaptureError(str(path), 0, "empty trace export")
    if kind(raw) == "otlp-protobuf":
        return otlp_proto.read(path)
    docs = json_lines(raw, str(path))
    first = docs[0]
    if isinstance(first, dict) and ({"resourceSpans", "resourceLogs"} & first.keys()):
        return otlp_json.turns_of(docs, str(path))
    if langfuse.looks_like(docs):
        return langfuse.turns_of(docs, str(path))
    raise CaptureError(str(path), 0, "neither an OTLP export (resourceSpans) nor a Langfuse "
                       "export (observations)")
