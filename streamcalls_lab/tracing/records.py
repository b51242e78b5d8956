"""What every trace reader gives: traced turns, each with the calls a tracer kept, and the
bounds an untrusted export is read within."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import _deepjson as deepjson
from .._deepjson import depth
from ..errors import CaptureError

MAX_BYTES = 64 * 1024 * 1024
"""A trace export larger than this is refused, not read (an export is untrusted input)."""
MAX_DEPTH = 256
"""JSON nested deeper than this in an export (its envelope, not an argument string) is
refused: no exporter writes it, and a parser's stack should not be the limit."""
MAX_SPANS = 200_000


@dataclass
class TracedCall:
    """One tool call as a tracer recorded it."""

    call_id: str | None
    tool: str | None
    args: str | None
    """The argument text as recorded; None: the tracer kept no arguments at all."""
    structured: bool = False
    """The tracer kept a parsed value (``args`` is its JSON), not the text it was sent."""


@dataclass
class TracedTurn:
    """One model call (a span, a Langfuse generation) and what its tracer kept."""

    source: str
    """Where in the export: the file and the span (or observation) id."""
    name: str = ""
    trace_id: str = ""
    span_id: str = ""
    response_id: str | None = None
    start: float | None = None
    """Unix seconds."""
    first_chunk: float | None = None
    """Seconds from the start to the first chunk, as the tracer recorded it."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    calls: list[TracedCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """What could not be read (an attribute of the wrong type, a JSON string that is not):
    reported with the turn, never a crash."""
    keeps_calls: bool = False
    kept_in: str = ""
    """Which convention the calls were read from (:data:`.attributes.CONVENTIONS`)."""
    """Some attribute the readers know for tool calls was present (even if empty)."""


def read_json(raw: bytes, source: str) -> Any:
    """Parse an untrusted JSON document within :data:`MAX_BYTES` and :data:`MAX_DEPTH`."""
    if len(raw) > MAX_BYTES:
        raise CaptureError(source, MAX_BYTES, f"trace export over {MAX_BYTES} bytes: not read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CaptureError(source, e.start, "not UTF-8") from None
    if (d := depth(text)) > MAX_DEPTH:
        raise CaptureError(source, 0, f"JSON nested {d} deep (limit {MAX_DEPTH})")
    try:
        return deepjson.parse(raw)
    except orjson.JSONDecodeError as e:
        raise CaptureError(source, e.pos, f"not JSON: {e.msg}") from None


def json_lines(raw: bytes, source: str) -> list[Any]:
    """A JSON document, or JSON lines (one document a line), each within the bounds."""
    if len(raw) > MAX_BYTES:
        raise CaptureError(source, MAX_BYTES, f"trace export over {MAX_BYTES} bytes: not read")
    stripped = raw.strip()
    try:
        return [read_json(stripped, source)]
    except CaptureError as whole:
        if b"\n" not in stripped:
            raise
        out, at = [], 0
        for line in raw.split(b"\n"):
            if line.strip():
                try:
                    out.append(read_json(line, source))
                except CaptureError as e:
                    raise CaptureError(source, at + e.offset, e.reason) from whole
            at += len(line) + 1
        return out
