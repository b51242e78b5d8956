"""Notebook 1's exercise: assemble a turn's calls from its rows, as the kit's accumulator does.

The checker feeds the student's ``assemble(events)`` turns written by the kit in all three
streamed formats, each holding one of the things an assembler must get right (a space at a
fragment boundary, prose before the calls, two calls to one tool, a call cut off before its
stop), and compares the answer with what :class:`~streamcalls_lab.accumulate.Accumulator`
hands on. A wrong answer is told which turn it got wrong and the likely reason.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import pandas as pd

from ..accumulate import Accumulator, present
from ..check import turn_bytes
from ..loader import load
from ..turns import Call, Text
from .checking import Exercise, Verdict, exercise

FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")
Events = list[dict[str, Any]]


def events(deltas: pd.DataFrame, turn: str | None = None) -> Events:
    """One turn's rows of a ``load()`` table as plain dicts (missing values as None), in
    wire order: what ``assemble`` is given. Without ``turn``, the table's first turn."""
    rows = deltas if turn is None else deltas[deltas["turn"] == turn]
    if turn is None and len(rows):
        rows = rows[rows["turn"] == rows["turn"].iloc[0]]
    return [{k: present(v) for k, v in r.items()} for r in rows.to_dict("records")]


# What each checked turn holds, and the mistake it exposes.
_CASES: tuple[tuple[str, Sequence[Text | Call], bool, str], ...] = (
    ("a space at a fragment boundary",
     (Call("create_ticket", "c1", ('{"summary": "urgent', " request from ops", '"}')),),
     False, "a space at the edge of a fragment is part of the value: join fragments as sent"),
    ("prose before the call",
     (Text(("Let me", " check.")), Call("lookup_order", "c1", ('{"order_id":', ' "A-4471"}'))),
     False, "text_delta rows are prose, not arguments: only args_delta rows carry arguments"),
    ("two calls to one tool",
     (Call("lookup_order", "c1", ('{"order_id":', ' "A-4471"}')),
      Call("lookup_order", "c2", ('{"order_id":', ' "B-2093"}'))),
     False, "two calls may share a tool's name: key the buffers by block"),
    ("a call cut off before its stop",
     (Call("lookup_order", "c1", ('{"order_id":', ' "A-4471"}')),
      Call("create_ticket", "c2", ('{"summary": "ref', "und"))),
     True, "a call without its stop event is not finished: leave it out"),
)


def _turns() -> list[tuple[str, str, Events]]:
    out = []
    for what, segments, cut, _ in _CASES:
        for fmt in FORMATS:
            body = turn_bytes(fmt, list(segments), cut=cut)
            out.append((what, fmt, events(load(body, name=f"{fmt}/{what}", strict=False))))
    return out


def expected(turn_events: Events) -> dict[Hashable, str]:
    """What the kit's accumulator hands on for these rows: ``{block: arguments}`` of each
    call whose stop arrived."""
    acc = Accumulator()
    for event in turn_events:
        acc.feed(event)
    return {buf.block: buf.args for buf in acc.calls if buf.complete}


def _check_assemble(answer: Any) -> Verdict:
    if not callable(answer):
        return Verdict(False, "give the function itself: check(name, assemble), not its result")
    hints = {what: hint for what, _, _, hint in _CASES}
    checked = 0
    for what, fmt, turn in _turns():
        want = expected(turn)
        try:
            got = answer([dict(e) for e in turn])
        except Exception as e:  # the student's function failing is a wrong answer
            return Verdict(False, f"on {what} ({fmt}) your function raised "
                                  f"{type(e).__name__}: {e}")
        if not isinstance(got, dict) or got != want:
            return Verdict(False, f"on {what} ({fmt}) the finished calls are {want!r}, your "
                                  f"function gave {got!r}. Hint: {hints[what]}.")
        checked += 1
    return Verdict(True, f"it agrees with the kit's accumulator on all {checked} turns "
                         f"({len(_CASES)} situations in each of {len(FORMATS)} formats): it "
                         "keys by block, joins fragments untouched and waits for each stop.")


def _assemble(turn_events: Events) -> dict[Hashable, str]:
    parts: dict[Hashable, list[str]] = {}
    done: set[Hashable] = set()
    for e in turn_events:
        if e["kind"] == "call_start":
            parts.setdefault(e["block"], [])
        elif e["kind"] == "args_delta":
            parts.setdefault(e["block"], []).append(e["fragment"] or "")
        elif e["kind"] in ("block_stop", "args_done") and e["block"] is not None:
            done.add(e["block"])
    return {block: "".join(p) for block, p in parts.items() if block in done}


def _stripping(turn_events: Events) -> dict[Hashable, str]:
    return {b: "".join(p.strip() for p in _parts(turn_events, b)) for b in _assemble(
        turn_events)}


def _parts(turn_events: Events, block: Hashable) -> list[str]:
    return [e["fragment"] or "" for e in turn_events
            if e["kind"] == "args_delta" and e["block"] == block]


def _no_stop_check(turn_events: Events) -> dict[Hashable, str]:
    blocks = {e["block"] for e in turn_events if e["kind"] == "args_delta"}
    return {b: "".join(_parts(turn_events, b)) for b in blocks}


def _with_text(turn_events: Events) -> dict[Hashable, str]:
    out = _assemble(turn_events)
    for e in turn_events:
        if e["kind"] == "text_delta" and e["block"] is not None:
            out[e["block"]] = out.get(e["block"], "") + (e["fragment"] or "")
    return out


def _by_tool(turn_events: Events) -> dict[Hashable, str]:
    first: dict[str, Hashable] = {}
    owner: dict[Hashable, Hashable] = {}
    for e in turn_events:
        if e["kind"] == "call_start":
            owner[e["block"]] = first.setdefault(e["tool"], e["block"])
    merged: dict[Hashable, str] = {}
    for block, args in _assemble(turn_events).items():
        key = owner.get(block, block)
        merged[key] = merged.get(key, "") + args
    return merged


WRONG: tuple[Callable[[Events], dict[Hashable, str]], ...] = (
    _stripping, _no_stop_check, _with_text, _by_tool)

exercise(Exercise(
    name="01-anatomy/assemble",
    task="Write assemble(events): from one turn's rows (dicts with kind, block, tool and "
         "fragment, as anatomy.events(deltas, turn) gives them), return {block: arguments} "
         "for every call whose stop (block_stop or args_done naming its block) arrived.",
    checker=_check_assemble,
    solution=lambda: _assemble,
    explanation=(
        "Keep one list of fragments per block, opened at the call_start; append each "
        "args_delta's fragment exactly as it came (no strip, no decoding); note each block "
        "a block_stop or args_done names (Chat's finish_reason row names no block: the rows "
        "after it close each call by its index); at the end, join the lists of the blocks "
        "that were closed. Text rows are left alone, a block is never looked up by its "
        "tool, and a call that never got its stop is not handed on.\n\n"
        "    def assemble(events):\n"
        "        parts, done = {}, set()\n"
        "        for e in events:\n"
        "            if e['kind'] == 'call_start':\n"
        "                parts.setdefault(e['block'], [])\n"
        "            elif e['kind'] == 'args_delta':\n"
        "                parts.setdefault(e['block'], []).append(e['fragment'] or '')\n"
        "            elif e['kind'] in ('block_stop', 'args_done') and e['block'] is not None:\n"
        "                done.add(e['block'])\n"
        "        return {b: ''.join(p) for b, p in parts.items() if b in done}"),
    wrong=(*WRONG, {1: '{"q": 1}'}),
))
