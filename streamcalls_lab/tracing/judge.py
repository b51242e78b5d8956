"""Each wire call of one turn against the calls a tracer recorded for it: a verdict from
:data:`.verdicts.VERDICTS`, decided on the argument text first, then the tool and the id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._deepjson import loads
from .records import TracedCall


@dataclass(frozen=True)
class WireCall:
    call_id: str
    tool: str
    args: str


@dataclass(frozen=True)
class Judged:
    wire: WireCall
    traced: TracedCall | None
    verdict: str
    note: str = ""


_NO_VALUE = object()


def _value(text: str | None) -> object:
    if text is None:
        return _NO_VALUE
    try:
        return loads(text)
    except ValueError:
        return _NO_VALUE


def same_value(a: str, b: str | None) -> bool:
    va, vb = _value(a), _value(b)
    return va is not _NO_VALUE and vb is not _NO_VALUE and type(va) is type(vb) and va == vb


def _args_verdict(wire: WireCall, got: str | None, others: Sequence[WireCall]) -> str:
    if got is None:  # the call is there, its arguments not
        return "empty" if wire.args else "ok"
    if got == wire.args:
        return "ok"
    if same_value(wire.args, got):
        return "reserialised"
    if not got.strip() or (got.strip() in ("{}", "null") and wire.args.strip() not in (
            "{}", "null", "")):
        return "empty"
    if any(o.args and o.args in got for o in others) and wire.args in got:
        return "merged"
    if wire.args.startswith(got):
        return "truncated"
    return "mangled"


def judge_turn(wire: Sequence[WireCall], traced: Sequence[TracedCall]) -> list[Judged]:
    """A verdict per wire call. A traced call is paired with a wire call by id, else by
    position among the calls not paired by id."""
    free = list(range(len(traced)))
    by_id: dict[int, list[int]] = {}
    for n, w in enumerate(wire):
        ids = [i for i in free if traced[i].call_id and traced[i].call_id == w.call_id]
        if ids:
            by_id[n] = ids
            free = [i for i in free if i not in ids]
    out = []
    for n, w in enumerate(wire):
        others = [o for m, o in enumerate(wire) if m != n]
        if n in by_id and len(by_id[n]) > 1:
            joined = "".join(traced[i].args or "" for i in by_id[n])
            out.append(Judged(w, traced[by_id[n][0]], "split",
                              f"{len(by_id[n])} traced calls with this id" + (
                                  "; their arguments joined are the wire's"
                                  if joined == w.args else "")))
            continue
        if n in by_id:
            t = traced[by_id[n][0]]
        elif free:
            t = traced[free.pop(0)]
        else:
            out.append(Judged(w, None, "missing", "no traced call left for it"))
            continue
        # a call spread over several traced calls with no id to tell: its pieces are
        # the following traced calls, joined
        if t.args is not None and t.args != w.args and w.args.startswith(t.args) and free:
            pieces, joined = [t], t.args
            while free and w.args.startswith(joined) and joined != w.args:
                nxt = traced[free[0]]
                if nxt.call_id and nxt.call_id != t.call_id:
                    break
                joined += nxt.args or ""
                pieces.append(traced[free.pop(0)])
            if joined == w.args and len(pieces) > 1:
                out.append(Judged(w, t, "split", f"{len(pieces)} traced calls"))
                continue
        verdict = _args_verdict(w, t.args, others)
        notes = []
        if t.structured:  # its text is the kit's dump of the value: never the wire's own
            notes.append("the tracer kept a parsed value, not the text")
            verdict = "reserialised" if verdict == "ok" else verdict
        if verdict in ("ok", "reserialised"):
            if t.tool is not None and t.tool != w.tool:
                verdict = "wrong_name"
            elif t.call_id is not None and t.call_id != w.call_id:
                verdict = "wrong_id"
            elif t.call_id is None:
                notes.append("no call id recorded")
        else:
            if t.tool is not None and t.tool != w.tool:
                notes.append("the tool name differs too")
        out.append(Judged(w, t, verdict, "; ".join(notes)))
    return out


def extra(wire: Sequence[WireCall], traced: Sequence[TracedCall],
          judged: Sequence[Judged]) -> list[TracedCall]:
    """Traced calls no wire call was paired with (a tracer that invents or splits calls)."""
    used = {id(j.traced) for j in judged if j.traced is not None}
    return [t for t in traced if id(t) not in used and not any(
        j.verdict == "split" and t.call_id and j.wire.call_id == t.call_id for j in judged)]
