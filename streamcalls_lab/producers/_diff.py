"""What did the gateway change? Two captures of one turn, compared call by call.

A gateway (LiteLLM, OpenRouter, a company proxy) reads one stream and writes another, often in
another format (Anthropic in, Chat out): it may re-index calls (BerriAI/litellm#5231), merge
two into one buffer (ollama/ollama#15457, langchain-ai/langchain#34807), cut a stream short
(langchain-ai/openwiki#39), drop or alter what it forwards (BerriAI/litellm#20711). Recorded on
both sides (two proxies), the two captures say what changed: :func:`diff` reads each as the
kit reads any (``load`` and the correct accumulator) and gives one row per difference. Cutting
the same text into other fragments is no difference: the summary says so, with the fragment
counts on each side.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pandas as pd

from .. import _deepjson as deepjson
from ..providers import FORMATS
from ..sources import Source
from ._conform import (
    Row,
    SeenCall,
    SeenTurn,
    broken_arguments,
    difference,
    frame,
    parsed,
    quoted,
    read_turn,
    same,
)

DIFF_COLUMNS = ("kind", "call", "a", "b", "detail")
KINDS = ("reordered", "reindexed", "merged", "split", "dropped", "added", "truncated", "name",
         "id", "arguments", "text")
"""What :func:`diff` reports."""
SIDES = ("a", "b")


def _equivalent(x: str, y: str) -> bool:
    """Two argument texts say the same: the same text, or the same parsed value."""
    if x == y:
        return True
    (ok_x, vx), (ok_y, vy) = parsed(x), parsed(y)
    return ok_x and ok_y and same(vx, vy)


def _prefix(x: str, y: str) -> bool:
    """One text is a proper prefix of the other (a stream cut short)."""
    return x != y and (y.startswith(x) or x.startswith(y))


def _alike(x: SeenCall, y: SeenCall) -> bool:
    """The same call, or that call cut short."""
    return x.tool == y.tool and (_equivalent(x.args, y.args) or _prefix(x.args, y.args))


def _key(c: SeenCall) -> tuple[str, str]:
    ok, value = parsed(c.args)
    return c.tool or "", deepjson.dumps(value) if ok else c.args


def _values(text: str) -> list[object] | None:
    """The JSON values ``text`` holds one after another ({..}{..}), or None."""
    out: list[object] = []
    at = 0
    body = text.strip()
    while at < len(body):
        try:
            value, at = deepjson.raw_decode(body, at)
        except ValueError:
            return None
        out.append(value)
        while at < len(body) and body[at].isspace():
            at += 1
    return out


def _run(calls: Sequence[SeenCall], start: int, whole: SeenCall) -> int | None:
    """Where a run of two or more calls from ``start``, each with arguments, ends when
    their arguments joined are ``whole``'s (text for text, or value for value), or None."""
    joined = ""
    for end in range(start, len(calls)):
        if not calls[end].args.strip():
            return None
        joined += calls[end].args
        if end > start and _equivalent(joined, whole.args):
            return end + 1
        if len(joined) > len(whole.args):
            break
    return None


def _merged(xs: Sequence[SeenCall], i: int, y: SeenCall) -> int | None:
    """Where the calls of a that ``y`` holds in one buffer end, from ``i``, or None."""
    values = _values(y.args)
    if values is not None and len(values) >= 2 and i + len(values) <= len(xs):
        each = [parsed(c.args) for c in xs[i:i + len(values)]]
        if all(ok and same(v, w) for (ok, v), w in zip(each, values, strict=True)):
            return i + len(values)  # {..}{..}: each value one call's
    return _run(xs, i, y)


def _names(calls: Sequence[SeenCall]) -> str:
    return ", ".join(c.tool or "?" for c in calls)


def _pair(x: SeenCall, y: SeenCall, blocks: bool) -> Iterator[Row]:
    """What changed between call ``x`` of a and the call ``y`` of b it became."""
    n = x.number
    if blocks and _shift(x) != _shift(y):
        yield ("reindexed", n, _text(x.block), _text(y.block),
               f"call {n} is at block {x.block} in a, {y.block} in b")
    if x.tool != y.tool:
        yield ("name", n, x.tool, y.tool,
               f"call {n} is named {quoted(x.tool)} in a, {quoted(y.tool)} in b")
    if x.call_id != y.call_id:
        yield ("id", n, x.call_id, y.call_id,
               f"call {n} has id {quoted(x.call_id)} in a, {quoted(y.call_id)} in b")
    if x.complete == y.complete and _equivalent(x.args, y.args):
        return
    if x.complete != y.complete or _prefix(x.args, y.args):
        cut, other = (y, x) if (len(y.args), y.complete) < (len(x.args), x.complete) else (x, y)
        side = "b" if cut is y else "a"
        if len(cut.args) < len(other.args):
            said = f"has the first {len(cut.args)} of {len(other.args)} characters of its " \
                   "arguments" + ("" if cut.complete else ", and never finished")
        else:
            said = f"never finished (all {len(cut.args)} characters of its arguments came, " \
                   "not its stop)"
        yield "truncated", n, x.args, y.args, f"call {n} in {side} {said}"
        return
    (ok_x, vx), (ok_y, vy) = parsed(x.args), parsed(y.args)
    if ok_x and ok_y:
        why = difference(vx, vy, SIDES)
    elif ok_x:
        why = f"b sends {broken_arguments(y.args, vx)[1]}"
    elif ok_y:
        why = f"a sends {broken_arguments(x.args, vy)[1]}"
    else:
        why = "neither side's arguments parse, and they differ"
    yield "arguments", n, x.args, y.args, why or "the arguments differ"


def _shift(c: SeenCall) -> int | None:
    """How far a call's block stands from its place among the calls: what a re-index
    changes, and a dropped or merged call before it does not."""
    return None if c.block is None else c.block - c.number


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _blocks_comparable(a: SeenTurn, b: SeenTurn) -> bool:
    """Blocks mean the same on both sides: one format, or two that count calls from 0."""
    if a.provider == b.provider:
        return True
    fa, fb = FORMATS.get(a.provider), FORMATS.get(b.provider)
    return bool(fa and fb and fa.counts_calls and fb.counts_calls)


def _calls(a: SeenTurn, b: SeenTurn) -> Iterator[Row]:
    xs, ys = list(a.calls), list(b.calls)
    keys_x, keys_y = [_key(c) for c in xs], [_key(c) for c in ys]
    if keys_x != keys_y and sorted(keys_x) == sorted(keys_y):
        yield ("reordered", None, _names(xs), _names(ys),
               "the same calls, announced in another order")
        left = list(ys)
        ys = []
        for k in keys_x:  # b's calls in a's order, to compare each with its own
            ys.append(left.pop(next(n for n, c in enumerate(left) if _key(c) == k)))
    blocks = _blocks_comparable(a, b)
    # Where a gateway keeps the ids, an id says which call is which; else the content does.
    kept = ({c.call_id for c in xs} & {c.call_id for c in ys}) - {None}

    def same_id(x: SeenCall, y: SeenCall) -> bool:
        return x.call_id in kept and x.call_id == y.call_id

    def other_id(x: SeenCall, y: SeenCall) -> bool:
        return bool(kept) and None not in (x.call_id, y.call_id) and x.call_id != y.call_id

    def one(x: SeenCall, y: SeenCall) -> bool:
        """The same call, or that call cut short."""
        return same_id(x, y) or (not other_id(x, y) and _alike(x, y))

    def dropped(x: SeenCall) -> Row:
        return "dropped", x.number, x.args, None, f"call {x.number} ({x.tool}) of a is not in b"

    def added(y: SeenCall) -> Row:
        return "added", y.number, None, y.args, f"b has call {y.number} ({y.tool}), a does not"

    i = j = 0
    while i < len(xs) and j < len(ys):
        x, y = xs[i], ys[j]
        if not other_id(x, y) and x.tool == y.tool and _equivalent(x.args, y.args):
            yield from _pair(x, y, blocks)
            i, j = i + 1, j + 1
        elif (merged := _merged(xs, i, y)) is not None:
            yield ("merged", x.number, " + ".join(c.args for c in xs[i:merged]), y.args,
                   f"calls {x.number} to {xs[merged - 1].number} of a ({_names(xs[i:merged])}) "
                   f"are one call in b ({y.tool}), their arguments in one buffer")
            i, j = merged, j + 1
        elif (split := _run(ys, j, x)) is not None:
            yield ("split", x.number, x.args, " + ".join(c.args for c in ys[j:split]),
                   f"call {x.number} of a ({x.tool}) is {split - j} calls in b "
                   f"({_names(ys[j:split])}), its arguments cut between them")
            i, j = i + 1, split
        elif one(x, y):
            yield from _pair(x, y, blocks)
            i, j = i + 1, j + 1
        elif i + 1 < len(xs) and one(xs[i + 1], y):
            yield dropped(x)
            i += 1
        elif j + 1 < len(ys) and one(x, ys[j + 1]):
            yield added(y)
            j += 1
        else:
            yield from _pair(x, y, blocks)
            i, j = i + 1, j + 1
    yield from (dropped(x) for x in xs[i:])
    yield from (added(y) for y in ys[j:])


def _turn(a: SeenTurn, b: SeenTurn) -> Iterator[Row]:
    if a.text != b.text:
        at = next((n for n, (p, q) in enumerate(zip(a.text, b.text, strict=False)) if p != q),
                  min(len(a.text), len(b.text)))
        yield ("text", None, a.text, b.text, f"the text differs from character {at} "
               f"(a has {len(a.text)} characters, b {len(b.text)})")
    for side, turn, other in (("a", a, b), ("b", b, a)):
        if other.ended and not turn.ended:
            why = f": at byte {turn.problems[0][0]}, {turn.problems[0][1]}" if turn.problems \
                else ""
            yield ("truncated", None, "ended" if a.ended else "no end",
                   "ended" if b.ended else "no end",
                   f"{side}'s turn ends with no end-of-turn event{why}")


def _chunking(a: SeenTurn, b: SeenTurn) -> str:
    """How the fragments differ, where the content does not ('' when they are the same)."""
    parts = [f"call {x.number}: {len(x.fragments)} → {len(y.fragments)}"
             for x, y in zip(a.calls, b.calls, strict=True) if x.fragments != y.fragments]
    if a.text_fragments != b.text_fragments:
        parts.append(f"text: {len(a.text_fragments)} → {len(b.text_fragments)}")
    return "; ".join(parts)


def diff(a: Source, b: Source) -> pd.DataFrame:
    """What changed between two captures of one turn (``a`` before a gateway, ``b`` after,
    say; in one format or two): one row per difference, none when they say the same.

    Each row has ``kind`` (one of :data:`KINDS`), ``call`` (the call's number in a, in order
    of announcement; in b for a call only b has; NA for the turn), what ``a`` and ``b`` say
    and ``detail``, in a sentence. Arguments are compared as parsed values (the key that
    differs is named); blocks only where they mean the same on both sides. The same content
    cut into other fragments is no difference: ``attrs["summary"]`` says ``same``, ``same,
    re-chunked: …`` (with the fragment counts) or how many differences there are, and
    ``attrs["fragments"]`` counts each side's fragments.
    """
    ta, tb = read_turn(a, "a"), read_turn(b, "b")
    rows = [*_calls(ta, tb), *_turn(ta, tb)]
    table = frame(rows, DIFF_COLUMNS, KINDS)
    counts = {"a": ta.fragments, "b": tb.fragments}
    if rows:
        summary = f"{len(rows)} difference{'s' if len(rows) > 1 else ''}"
    else:
        how = _chunking(ta, tb)
        summary = (f"same, re-chunked: a in {counts['a']} fragments, b in {counts['b']} "
                   f"({how})") if how else "same"
    table.attrs.update(summary=summary, fragments=counts, rechunked=not rows and
                       summary != "same", formats={"a": ta.provider, "b": tb.provider})
    return table
