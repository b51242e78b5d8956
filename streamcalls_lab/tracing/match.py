"""Traced turns to captured turns: by response id, then by call ids, then (for what is
left) by the order of turns with the same tools. Nothing is dropped: what pairs with
nothing is returned on its side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .records import TracedTurn
from .wire import WireTurn


@dataclass
class Pairing:
    pairs: list[tuple[WireTurn, TracedTurn, str]]
    """(wire turn, traced turn, matched by: ``response id``, ``call ids`` or ``order``)"""
    wire_alone: list[WireTurn]
    traced_alone: list[TracedTurn]


def _tools(turn: WireTurn | TracedTurn) -> tuple[str, ...]:
    return tuple(c.tool or "" for c in turn.calls)


def match(wire: Sequence[WireTurn], traced: Sequence[TracedTurn]) -> Pairing:
    left_w, left_t = list(wire), list(traced)
    pairs: list[tuple[WireTurn, TracedTurn, str]] = []

    def take(w: WireTurn, t: TracedTurn, how: str) -> None:
        pairs.append((w, t, how))
        left_w.remove(w)
        left_t.remove(t)

    by_response = {w.response_id: w for w in wire if w.response_id}
    for t in list(left_t):
        w = by_response.get(t.response_id or "")
        if w is not None and w in left_w:
            take(w, t, "response id")
    by_call = {c.call_id: w for w in wire for c in w.calls if c.call_id}
    for t in list(left_t):
        found = {id(by_call[c.call_id]): by_call[c.call_id] for c in t.calls
                 if c.call_id in by_call}
        if len(found) == 1 and (w := next(iter(found.values()))) in left_w:
            take(w, t, "call ids")
    # what is left: in order, a traced turn to the first wire turn with the same tools,
    # when no other traced turn left has them (two candidates would be a guess)
    for t in list(left_t):
        same = [w for w in left_w if _tools(w) == _tools(t)]
        rivals = [o for o in left_t if _tools(o) == _tools(t)]
        if same and len(rivals) == len(same) and (_tools(t) or t.keeps_calls):
            take(same[0], t, "order")
    return Pairing(pairs, left_w, left_t)
