"""Does your tracer record what the wire said? Trace exports (OTLP JSON, OTLP protobuf,
Langfuse) read into traced turns, matched to captures and judged call by call.

Readers: :mod:`.otlp_json`, :mod:`.otlp_proto`, :mod:`.langfuse` (which one:
:func:`.read.read_trace`); the conventions a span is read for: :mod:`.attributes`; the
verdicts: :data:`.verdicts.VERDICTS`; live, against a running tracer: :mod:`.live`.
"""

from __future__ import annotations

from .check import TRACE_COLUMNS, compare, trace_check
from .judge import WireCall, judge_turn
from .read import READERS, read_trace
from .records import MAX_BYTES, MAX_DEPTH, TracedCall, TracedTurn
from .verdicts import PASSING, VERDICTS, Verdict
from .wire import WireTurn, wire_turns

__all__ = [
    "MAX_BYTES", "MAX_DEPTH", "PASSING", "READERS", "TRACE_COLUMNS", "VERDICTS", "TracedCall",
    "TracedTurn", "Verdict", "WireCall", "WireTurn", "compare", "judge_turn", "read_trace",
    "trace_check", "wire_turns",
]
