"""``trace_check``: every captured call against what a trace export recorded for it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..sources import Source
from .judge import judge_turn
from .match import match
from .read import read_trace
from .records import TracedTurn
from .verdicts import PASSING, VERDICTS
from .wire import WireTurn, wire_turns

TRACE_COLUMNS = (
    "turn", "provider", "call_id", "tool", "wire_args", "verdict", "traced_call_id",
    "traced_tool", "traced_args", "note", "matched_by", "span", "kept_in",
    "wire_first_chunk", "traced_first_chunk", "wire_input_tokens", "traced_input_tokens",
    "wire_output_tokens", "traced_output_tokens", "problems",
)


def _row(w: WireTurn, t: TracedTurn | None, how: str, j: Any) -> dict[str, Any]:
    traced = j.traced
    return {
        "turn": w.turn, "provider": w.provider, "call_id": j.wire.call_id,
        "tool": j.wire.tool, "wire_args": j.wire.args, "verdict": j.verdict,
        "traced_call_id": traced.call_id if traced else None,
        "traced_tool": traced.tool if traced else None,
        "traced_args": traced.args if traced else None, "note": j.note, "matched_by": how,
        "span": t.source if t else None, "kept_in": t.kept_in if t else None,
        "wire_first_chunk": w.first_chunk, "traced_first_chunk": t.first_chunk if t else None,
        "wire_input_tokens": w.input_tokens,
        "traced_input_tokens": t.input_tokens if t else None,
        "wire_output_tokens": w.output_tokens,
        "traced_output_tokens": t.output_tokens if t else None,
        "problems": "; ".join(t.problems) if t else "",
    }


def judged_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    out = pd.DataFrame(list(rows), columns=list(TRACE_COLUMNS))
    out["verdict"] = pd.Categorical(out["verdict"], categories=list(VERDICTS))
    for col in ("wire_first_chunk", "traced_first_chunk"):
        out[col] = out[col].astype("Float64")
    for col in ("wire_input_tokens", "traced_input_tokens", "wire_output_tokens",
                "traced_output_tokens"):
        out[col] = out[col].astype("Int64")
    return out


def compare(wire: Sequence[WireTurn], traced: Sequence[TracedTurn]) -> pd.DataFrame:
    """One row per wire call (:data:`TRACE_COLUMNS`); ``attrs["unmatched_traces"]`` lists
    the traced turns no capture matched, ``attrs["extra_calls"]`` traced calls no wire call
    was paired with, ``attrs["passed"]`` whether every call is ``ok`` or ``reserialised``."""
    from .judge import Judged, extra

    pairing = match(wire, traced)
    rows, extras = [], []
    for w, t, how in pairing.pairs:
        judged = judge_turn(w.calls, t.calls)
        rows += [_row(w, t, how, j) for j in judged]
        extras += [{"turn": w.turn, "span": t.source, "call_id": c.call_id, "tool": c.tool,
                    "args": c.args} for c in extra(w.calls, t.calls, judged)]
    for w in pairing.wire_alone:
        rows += [_row(w, None, "", Judged(c, None, "missing", "no traced turn matched"))
                 for c in w.calls]
    order = {w.turn: n for n, w in enumerate(wire)}
    rows.sort(key=lambda r: order[r["turn"]])
    out = judged_frame(rows)
    out.attrs.update(
        unmatched_traces=[{"span": t.source, "name": t.name, "response_id": t.response_id,
                           "calls": len(t.calls), "problems": "; ".join(t.problems)}
                          for t in pairing.traced_alone],
        extra_calls=extras,
        passed=bool(out["verdict"].isin(list(PASSING)).all()),
    )
    return out


def trace_check(captures: Source | pd.DataFrame, trace: str | Path, *,
                strict: bool = True) -> pd.DataFrame:
    """Every call the captures hold against what the trace export recorded for it: one row
    per wire call with its verdict (:data:`~.verdicts.VERDICTS`); see :func:`compare`.
    ``strict=False`` reads the captures leniently (``load``'s meaning)."""
    return compare(wire_turns(captures, strict=strict), read_trace(trace))
