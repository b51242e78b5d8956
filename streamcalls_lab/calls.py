"""``calls()``: one row per tool call, assembled by the correct accumulator."""

from __future__ import annotations

import json

import pandas as pd

from .accumulate import Accumulator
from .deltas import load
from .sources import Source

CALL_COLUMNS = (
    "turn", "provider", "block", "call_id", "tool", "args", "n_deltas", "chars",
    "wire_chars", "complete", "valid_json", "final_matches", "problem",
)
_FED = ["kind", "block", "call_id", "tool", "fragment", "wire_chars", "final"]


def _valid(args: str) -> bool:
    try:
        json.loads(args)
    except ValueError:
        return False
    return True


def calls(source_or_deltas: Source | pd.DataFrame, **load_options: object) -> pd.DataFrame:
    """One row per call: the fragments joined byte-exact, and whether the call completed.

    Accepts what :func:`load` accepts (and its keyword options), or the
    dataframe ``load`` returned. ``complete`` is True only when the call's
    stop or done event arrived; ``final_matches`` compares the fragments with
    the whole string a done event repeats (NA where none does).
    """
    if isinstance(source_or_deltas, pd.DataFrame):
        deltas = source_or_deltas
    else:
        deltas = load(source_or_deltas, **load_options)  # type: ignore[arg-type]
    rows: list[dict[str, object]] = []
    for (turn, provider), group in deltas.groupby(["turn", "provider"], sort=False,
                                                  observed=True):
        acc = Accumulator()
        for event in group[_FED].to_dict("records"):
            acc.feed(event)
        for buf in acc.calls:
            args = buf.args
            rows.append({
                "turn": turn,
                "provider": provider,
                "block": buf.block,
                "call_id": buf.call_id,
                "tool": buf.tool,
                "args": args,
                "n_deltas": buf.n_deltas,
                "chars": len(args),
                "wire_chars": buf.wire_chars,
                "complete": buf.complete,
                "valid_json": _valid(args),
                "final_matches": None if buf.final is None else buf.final == args,
                "problem": "; ".join(buf.problems) or None,
            })
    table = pd.DataFrame(rows, columns=list(CALL_COLUMNS))
    return table.astype({
        "turn": "str", "provider": "category", "block": "Int64", "call_id": "str",
        "tool": "str", "args": "str", "n_deltas": "int64", "chars": "int64",
        "wire_chars": "int64", "complete": "bool", "valid_json": "bool",
        "final_matches": "boolean", "problem": "str",
    })
