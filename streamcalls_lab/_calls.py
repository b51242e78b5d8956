"""``calls()``: one row per tool call, assembled by the correct accumulator."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _columns as columns
from ._deepjson import is_json
from .accumulate import Accumulator, CallBuffer, present
from .events import IDENTITY_CHANGED
from .loader import gc_paused, load
from .providers import FORMATS
from .sources import Source

CALL_COLUMNS = (
    "turn", "provider", "block", "choice", "call_id", "tool", "args", "n_deltas", "chars",
    "wire_chars", "complete", "valid_json", "final_matches", "problem", "args_format",
)
TEXT_INPUT = "custom_tool_call_input"
"""In an event's name: the call's input is free text (a Responses custom tool), not JSON."""
_FED = ["kind", "block", "choice", "call_id", "tool", "fragment", "wire_chars", "final", "event",
        "problem"]


# The kinds that change a call; text and other rows never do, so they are not fed.
_CALL_KINDS = frozenset(("call_start", "args_delta", "block_stop", "args_done", "turn_stop"))


def _valid(args: str) -> bool:
    """A strict parse succeeds, at any depth (:func:`.deepjson.is_json`)."""
    return is_json(args)


def calls(source_or_deltas: Source | pd.DataFrame, **load_options: object) -> pd.DataFrame:
    """One row per call: the fragments joined byte-exact, and whether the call completed.

    Accepts what :func:`load` accepts (and its keyword options), or the
    dataframe ``load`` returned. ``complete`` is True only when the call's
    stop or done event arrived; ``final_matches`` compares the fragments with
    the whole string a done event repeats (NA where none does).

    One :class:`Accumulator` per (turn, provider), in order of first appearance, is fed the
    rows that concern calls (it keys them by choice and block itself, so each of a Chat
    response's ``n`` choices keeps its own calls); the columns are read once as lists, never
    row by row through pandas, so a million calls take seconds.
    """
    if isinstance(source_or_deltas, pd.DataFrame):
        deltas = source_or_deltas
    else:
        deltas = load(source_or_deltas, **load_options)  # type: ignore[arg-type]
    with gc_paused():
        return _table(*_accumulate(deltas))


def _accumulate(deltas: pd.DataFrame) -> tuple[dict[tuple[str, str], Accumulator], set[int]]:
    """The accumulators, and the ``id`` of each call whose input is free text."""
    kinds = deltas["kind"].tolist()
    said = deltas["problem"].tolist() if "problem" in deltas else [None] * len(kinds)
    wanted = [i for i, kind in enumerate(kinds) if kind in _CALL_KINDS
              or (kind == "error" and _changed(said[i]))]
    rows = deltas.take(wanted)
    turns, providers = rows["turn"].tolist(), rows["provider"].tolist()
    texts: set[int] = set()
    events = rows["event"].tolist() if "event" in rows else [""] * len(rows)
    nothing = [None] * len(rows)
    fed = zip(*(rows[c].tolist() if c in rows else nothing for c in _FED), strict=True)
    accs: dict[tuple[str, str], Accumulator] = {}
    for turn, provider, name, values in zip(turns, providers, events, fed, strict=True):
        if present(turn) is None or present(provider) is None:
            continue  # groupby drops a row without a key
        acc = accs.get((turn, provider))
        if acc is None:
            acc = accs[(turn, provider)] = Accumulator()
        event = dict(zip(_FED, values, strict=True))
        if event["kind"] == "error":  # a reader's identity_changed row
            _note_change(acc, event)
            continue
        acc.feed(event)
        if TEXT_INPUT in name and acc.calls:
            texts.add(id(acc.by_key.get(acc.key(event), acc.calls[-1])))
    return accs, texts


def _changed(problem: object) -> bool:
    return isinstance(problem, str) and problem.startswith(IDENTITY_CHANGED)


def _note_change(acc: Accumulator, row: dict[str, object]) -> None:
    """A reader's row saying the identity of the call it names changed, on an event that
    gave the call no row of its own (Realtime's ``response.done`` repeating its items): the
    call's problem, unless a row of that event already told the accumulator so."""
    buf = acc.by_key.get(acc.key(row))
    if buf is None:
        return
    on = f" on {row['event']}"
    if not any(_changed(p) and on in p for p in buf.problems):
        buf.problems.append(str(row["problem"]))


def _missing(buf: CallBuffer, provider: str) -> list[str]:
    """What a finished call lacks that a call must have to be made: a name, and an id where
    the format's calls carry one (``WireFormat.call_ids_sent``)."""
    if not buf.complete:
        return []
    fmt = FORMATS.get(provider)
    lacks = [] if buf.tool else ["no tool name"]
    if not buf.call_id and (fmt is None or fmt.call_ids_sent):
        lacks.append("no call id")
    return [f"finished with {' and '.join(lacks)}: not a call that can be made"] if lacks else []


def _table(accs: dict[tuple[str, str], Accumulator], texts: set[int]) -> pd.DataFrame:
    cols: dict[str, list[object]] = {c: [] for c in CALL_COLUMNS}
    for (turn, provider), acc in accs.items():
        for buf in acc.calls:
            args = buf.args
            cols["turn"].append(turn)
            cols["provider"].append(provider)
            cols["block"].append(buf.block)
            cols["choice"].append(buf.choice)
            cols["call_id"].append(buf.call_id)
            cols["tool"].append(buf.tool)
            cols["args"].append(args)
            cols["n_deltas"].append(buf.n_deltas)
            cols["chars"].append(len(args))
            cols["wire_chars"].append(buf.wire_chars)
            cols["complete"].append(buf.complete)
            cols["valid_json"].append(_valid(args))
            cols["final_matches"].append(None if buf.final is None else buf.final == args)
            cols["problem"].append("; ".join(buf.problems + _missing(buf, provider)) or None)
            cols["args_format"].append("text" if id(buf) in texts else "json")
    return pd.DataFrame({
        "turn": columns.strings(cols["turn"]),
        "provider": columns.category(cols["provider"]),
        "block": columns.ints(cols["block"]),
        "choice": columns.ints(cols["choice"]),
        "call_id": columns.strings(cols["call_id"]),
        "tool": columns.strings(cols["tool"]),
        "args": columns.strings(cols["args"]),
        "n_deltas": np.array(cols["n_deltas"], dtype="int64"),
        "chars": np.array(cols["chars"], dtype="int64"),
        "wire_chars": np.array(cols["wire_chars"], dtype="int64"),
        "complete": np.array(cols["complete"], dtype="bool"),
        "valid_json": np.array(cols["valid_json"], dtype="bool"),
        "final_matches": pd.array(cols["final_matches"], dtype="boolean"),
        "problem": columns.strings(cols["problem"]),
        "args_format": columns.category(cols["args_format"], ("json", "text")),
    })
