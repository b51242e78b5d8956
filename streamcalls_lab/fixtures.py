"""Fixtures that can fail: re-cut a captured turn, cut it off, and check a set for coverage.

A fixture set catches the argument-handling bugs only if it has five things (the chapter's
list); :func:`coverage` checks a set of captures for each, per wire format:

``two_calls``
    (a) a turn with two or more calls, so buffers must be told apart.
``long_args``
    (b) a call with at least ``LONG_ARGS`` (400) argument characters arriving in at least
    ``MANY_DELTAS`` (24, two dozen) non-empty fragments.
``escape_split``
    (c) a call whose argument text has a JSON escape (``\\n``, ``\\"``, ``\\u00e9`` ...) and a
    non-ASCII character (literal, or written as a ``\\u`` escape), with a fragment boundary
    strictly inside one of its escapes (between ``\\`` and ``n``, inside ``\\u00e9``).
``prose_around``
    (d) a turn with text before its first call, and text after the call. The result of a
    call only reaches the model in the *next* request, so "after" counts text later in the
    same turn (after its last argument fragment) or text in any later turn of the same
    conversation. Turns belong to one conversation when their names differ only in a
    trailing ``__i<N>`` (N orders them), the naming the real captures use.
``cut_off``
    (e) a turn that stops mid-arguments: a call with at least one argument fragment and no
    stop or done event, in a turn with no end-of-turn event.

:func:`resplit` and :func:`truncate` rewrite one captured turn at the frame level, so
every other byte (ids, padding, pings) stays as recorded. What a frame holds is the format's
declaration (``FORMAT`` in ``providers/<format>.py``): which keys hold argument fragments,
how its frames are framed, which numbers count the frames; nothing here names a format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from os import PathLike as os_PathLike
from typing import Any

import orjson
import pandas as pd

from . import _deepjson as deepjson
from . import corpus
from .accumulate import FED, Accumulator, CallBuffer, present, turn_records
from .framing import decode_any
from .framing.frame import Frame
from .generate import GENERATED_FORMATS as GENERATED
from .loader import load
from .providers import FORMATS
from .providers.as_written import value_span
from .providers.spec import WireFormat
from .sources import Source, resolve
from .wording import count, number

LONG_ARGS = 400
SAMPLED_BYTES = 64 * 1024
"""A sample of captures (:func:`caught`) draws from those of at most this size."""
MANY_DELTAS = 24
PROPERTIES = ("two_calls", "long_args", "escape_split", "prose_around", "cut_off")
_STEP = re.compile(r"^(?P<conversation>.*)__i(?P<step>\d+)$")


def unreadable(events: pd.DataFrame, names: Sequence[str] = ()) -> dict[str, str]:
    """The turns no wire format could read (an empty file, a PNG, a JSON document...), each
    with why: its first problem, or that it holds no event of a known format. ``names``:
    every turn expected, so one that gave no row at all is named too."""
    out = {name: "no events at all (an empty file?)" for name in names}
    for turn, rows in events.groupby("turn", sort=False):
        if (rows["provider"].astype(str) != "unknown").any():
            out.pop(str(turn), None)
            continue
        problems = rows["problem"].dropna()
        out[str(turn)] = (f"byte {rows.loc[problems.index[0], 'offset']}: {problems.iloc[0]}"
                          if len(problems) else "no event of a known wire format")
    return out


# -- text-level helpers --------------------------------------------------------------------
def escape_spans(args: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every JSON escape in argument text (``\\n`` is 2 long, ``\\uXXXX`` 6).

    Outside strings JSON has no backslash, so a plain scan finds exactly the escapes.
    """
    spans: list[tuple[int, int]] = []
    at = args.find("\\")
    while at >= 0:
        end = min(len(args), at + (6 if args[at + 1 : at + 2] == "u" else 2))
        spans.append((at, end))
        at = args.find("\\", end)
    return spans


def has_non_ascii(args: str) -> bool:
    """A character beyond ASCII, literal or as a ``\\u`` escape."""
    if any(ord(c) > 127 for c in args):
        return True
    return any(int(m.group(1), 16) > 127 for m in re.finditer(r"\\u([0-9a-fA-F]{4})", args))


def boundaries(fragments: Sequence[str]) -> list[int]:
    """Offsets between consecutive non-empty fragments, in code points of the joined text."""
    out: list[int] = []
    at = 0
    for fragment in fragments:
        if fragment:
            if at:
                out.append(at)
            at += len(fragment)
    return out


def cuts_inside_escapes(args: str, cuts: Sequence[int]) -> list[int]:
    """The cuts that fall strictly inside an escape sequence of ``args``."""
    spans = escape_spans(args)
    return [c for c in cuts if any(s < c < e for s, e in spans)]


# -- coverage ------------------------------------------------------------------------------
def _deltas(source_or_deltas: Source | pd.DataFrame) -> pd.DataFrame:
    if isinstance(source_or_deltas, pd.DataFrame):
        if "kind" not in source_or_deltas.columns:
            raise TypeError("coverage needs load()'s events, not calls(): fragment "
                            "boundaries and prose live in the events")
        return source_or_deltas
    # Lenient: a capture cut mid-frame is exactly what property (e) looks for.
    return load(source_or_deltas, strict=False)


def _turn_facts(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    acc = Accumulator()
    for event in events:
        acc.feed(event)
    bufs: list[CallBuffer] = acc.calls
    kinds = [str(e["kind"]) for e in events]
    seqs = [present(e["seq"]) for e in events]
    # a text event counts where it carries text
    text = [s for k, s, e in zip(kinds, seqs, events, strict=True)
            if k == "text_delta" and isinstance(e["fragment"], str) and e["fragment"]]
    starts = [s for k, s in zip(kinds, seqs, strict=True) if k == "call_start" and s is not None]
    fragments = [s for k, s in zip(kinds, seqs, strict=True)
                 if k == "args_delta" and s is not None]
    first_call, last_fragment = min(starts, default=None), max(fragments, default=None)
    return {
        "calls": len(bufs),
        "two_calls": len(bufs) >= 2,
        "long_args": any(len(b.args) >= LONG_ARGS and b.n_deltas >= MANY_DELTAS for b in bufs),
        "escape_split": any(_escape_split(b) for b in bufs),
        "prose_before": bool(bufs) and first_call is not None
        and any(s is not None and s < first_call for s in text),
        "prose_after": bool(bufs) and last_fragment is not None
        and any(s is not None and s > last_fragment for s in text),
        "has_text": bool(text),
        "cut_off": "turn_stop" not in kinds
        and any(not b.complete and b.n_deltas > 0 for b in bufs),
    }


def _escape_split(buf: CallBuffer) -> bool:
    args = buf.args
    return has_non_ascii(args) and bool(cuts_inside_escapes(args, boundaries(buf.parts)))


def coverage_by_turn(source_or_deltas: Source | pd.DataFrame) -> pd.DataFrame:
    """One row per turn: which of the five properties it shows, and the facts behind them.

    Accepts what :func:`load` accepts, or the dataframe it returned.
    """
    deltas = _deltas(source_or_deltas)
    rows = []
    for turn, provider, events in turn_records(deltas, [*FED, "seq"]):
        match = _STEP.match(str(turn))
        conversation, step = (match["conversation"], int(match["step"])) if match else (turn, 0)
        rows.append({"turn": turn, "provider": provider, "conversation": conversation,
                     "step": step, **_turn_facts(events)})
    table = pd.DataFrame(rows, columns=[
        "turn", "provider", "conversation", "step", "calls", "two_calls", "long_args",
        "escape_split", "prose_before", "prose_after", "has_text", "cut_off"])
    # text in a later turn of the same conversation counts as text after the call
    steps_with_text: dict[tuple[Any, Any], list[int]] = {}
    for row in rows:
        if row["has_text"]:
            steps_with_text.setdefault((row["provider"], row["conversation"]), []).append(
                row["step"])
    later_text = [any(s > row["step"] for s in steps_with_text.get(
        (row["provider"], row["conversation"]), ())) for row in rows]
    table["prose_around"] = table["prose_before"] & (table["prose_after"] | pd.Series(
        later_text, index=table.index, dtype=bool))
    return table.astype({"turn": "str", "provider": "str", "conversation": "str",
                         "step": "int64", "calls": "int64"})


def coverage(source_or_deltas: Source | pd.DataFrame) -> pd.DataFrame:
    """Which of the five properties a set of captures covers, one row per wire format.

    Columns are :data:`PROPERTIES` (bool) plus ``turns``; the three formats this kit knows
    always have a row, so a format with no captures shows as covering nothing.
    """
    by_turn = coverage_by_turn(source_or_deltas)
    table = by_turn.groupby("provider")[list(PROPERTIES)].any()
    table["turns"] = by_turn.groupby("provider").size()
    # The formats fixtures are made in always show, covered or not; others when present.
    order = list(GENERATED) + sorted(set(table.index) - set(GENERATED))
    table = table.reindex(order)
    table[list(PROPERTIES)] = table[list(PROPERTIES)].fillna(False).astype(bool)
    table["turns"] = table["turns"].fillna(0).astype("int64")
    table.index.name = "provider"
    return table


# -- rewriting one turn --------------------------------------------------------------------
class _Where(Accumulator):
    """The correct accumulator, also noting which frame carried each argument fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.offsets: dict[int, list[int]] = {}
        self.opened: dict[int, int] = {}

    def feed(self, event: Mapping[str, Any]) -> None:
        super().feed(event)
        if event["kind"] == "call_start":
            self.opened[id(self.calls[-1])] = int(event["offset"])
        if event["kind"] == "args_delta" and isinstance(event.get("fragment"), str) and (
            event["fragment"]
        ):
            buf = self.by_key[self.key(event)]
            self.offsets.setdefault(id(buf), []).append(int(event["offset"]))


class _Turn:
    """One capture's bytes, frames and calls, ready to be rewritten."""

    def __init__(self, source: Source) -> None:
        captures = resolve(source)
        if len(captures) != 1:
            raise ValueError(f"expected one captured turn, got {len(captures)}")
        self.name = captures[0].name
        self.body = b"".join(c[1] if isinstance(c, tuple) else bytes(c)
                             for c in captures[0].chunks)
        self.frames: dict[int, Frame] = {
            f.offset: f for f in decode_any([self.body], self.name)}
        self.events = load(self.body, name=self.name)
        self.provider = str(self.events["provider"].iloc[0]) if len(self.events) else ""
        self.spec: WireFormat | None = FORMATS.get(self.provider)
        self.where = _Where()
        for event in self.events.to_dict("records"):
            self.where.feed(event)
        self.starts = set(self.events.loc[self.events["kind"] == "call_start", "offset"])

    def call(self, index: int) -> tuple[CallBuffer, list[int]]:
        calls = self.where.calls
        if not -len(calls) <= index < len(calls):
            raise IndexError(f"{self.name} has {len(calls)} calls; no call {index}")
        buf = calls[index]
        return buf, self.where.offsets.get(id(buf), [])

    def with_fragment(self, offset: int, old: str, fragment: str) -> bytes:
        """The frame at ``offset`` with its argument fragment ``old`` (the string under one
        of the format's fragment keys that reads so) replaced, all else unchanged."""
        spec = self.spec
        if spec is None or spec.calls_whole or spec.framing not in _TEXT_FRAMINGS:
            raise ValueError(f"cannot rewrite {self.provider!r} frames: only formats that "
                             "stream argument fragments in text framings "
                             f"({', '.join(_TEXT_FRAMINGS)}) can be re-cut")
        frame = self.frames[offset]
        text = self.body[frame.offset : frame.end].decode("utf-8")
        span = next((found for key in spec.fields.fragment
                     if (found := value_span(text, key, old, 0, len(text))) is not None), None)
        if span is None:
            keys = ", ".join(spec.fields.fragment)
            raise ValueError(f"{self.name}: byte {offset}: no {keys} string in the frame "
                             f"reads {old!r:.40}")
        escaped = json.dumps(fragment, ensure_ascii=False)
        return (text[: span[0]] + escaped + text[span[1] :]).encode("utf-8")

    def counters(self) -> list[str]:
        """The numbers the envelope declares that count the frames (each frame's is the one
        before's plus one, as Responses' ``sequence_number``): a rewrite renumbers them."""
        if self.spec is None:
            return []
        runs: dict[str, list[int]] = {key: [] for key in self.spec.envelope.numbers}
        for frame in self.frames.values():
            try:
                payload = deepjson.parse(frame.data)
            except orjson.JSONDecodeError:
                continue
            if isinstance(payload, dict):
                for key, run in runs.items():
                    if type(payload.get(key)) is int:
                        run.append(payload[key])
        return [key for key, run in runs.items() if len(run) > 1 and all(
            b == a + 1 for a, b in pairwise(run))]


_TEXT_FRAMINGS = ("sse", "ndjson", "jsonarray", "prefixed")
"""Framings whose frames are text a fragment can be rewritten in (event-stream's CRCs would
need re-encoding)."""


def _renumber(body: bytes, key: str) -> bytes:
    """Events that count themselves (``key``): make the count run on without a gap."""
    pattern = re.compile(rb'("' + re.escape(key.encode()) + rb'"\s*:\s*)(\d+)')
    numbers = iter(range(10**9))
    first = pattern.search(body)
    if first is None:
        return body
    start = int(first.group(2))
    return pattern.sub(lambda m: m.group(1) + b"%d" % (start + next(numbers)), body)


def resplit(
    source: Source,
    cuts: Sequence[int] | Mapping[int, Sequence[int]],
    *,
    call: int = 0,
) -> bytes:
    """The same turn with a call's arguments cut at exactly ``cuts`` (code-point offsets).

    ``cuts`` applies to call number ``call`` (announcement order), or maps call numbers to
    cuts. Each fragment frame is rewritten in place, extra fragments are copies of the
    call's last plain fragment frame placed after it, and surplus ones are dropped; every
    other byte stays as captured (a number that counts the frames, such as Responses'
    ``sequence_number``, is renumbered). Timing is not carried over: the reads no longer
    match.
    """
    from .generate import cut_at  # the one place a string is cut at given offsets

    turn = _Turn(source)
    plan = cuts if isinstance(cuts, Mapping) else {call: cuts}
    replace: dict[int, bytes] = {}
    for index, points in plan.items():
        buf, offsets = turn.call(index)
        if not offsets:
            raise ValueError(f"{turn.name}: call {index} has no argument fragments to re-cut")
        sent = dict(zip(offsets, [p for p in buf.parts if p], strict=True))  # frame -> its
        pieces = cut_at(buf.args, points)
        for offset, piece in zip(offsets, pieces, strict=False):
            replace[offset] = turn.with_fragment(offset, sent[offset], piece)
        for offset in offsets[len(pieces) :]:
            # A surplus frame that also opens the call keeps its announcement, empty.
            replace[offset] = (turn.with_fragment(offset, sent[offset], "")
                               if offset in turn.starts else b"")
        if len(pieces) > len(offsets):
            plain = [o for o in offsets if o not in turn.starts]
            if not plain:
                raise ValueError(f"{turn.name}: call {index} has no plain fragment frame "
                                 "to copy for the extra fragments")
            extra = [turn.with_fragment(plain[-1], sent[plain[-1]], p)
                     for p in pieces[len(offsets) :]]
            replace[offsets[-1]] += b"".join(extra)
    out: list[bytes] = []
    at = 0
    for offset in sorted(replace):
        frame = turn.frames[offset]
        out += [turn.body[at:offset], replace[offset]]
        at = frame.end
    out.append(turn.body[at:])
    body = b"".join(out)
    for key in turn.counters():
        body = _renumber(body, key)
    return body


def truncate(source: Source, *, call: int = -1, at: int | None = None) -> bytes:
    """The turn cut off mid-arguments, after a whole frame, with nothing after it.

    Keeps the frames up to the last fragment of call number ``call`` that ends at or before
    argument character ``at`` (default: half the arguments); if none does, the stream ends
    right after the call opens. Nothing follows: no stop, done or [DONE]. Refused for a
    format that sends each call whole (``FORMAT.calls_whole``): no frame ends inside one.
    """
    turn = _Turn(source)
    if turn.spec is not None and turn.spec.calls_whole:
        raise ValueError(f"{turn.provider} sends each call whole: a stream cannot be cut "
                         "off inside one")
    buf, offsets = turn.call(call)
    args = buf.args
    at = len(args) // 2 if at is None else at
    if not 0 <= at < len(args):
        raise ValueError(f"at={at} does not cut the call's {len(args)} argument characters")
    keep = None
    sent = 0
    for offset, piece in zip(offsets, [p for p in buf.parts if p], strict=True):
        sent += len(piece)
        if sent > at:
            break
        keep = offset
    if keep is None:
        keep = turn.where.opened.get(id(buf))
        if keep is None:
            raise ValueError(f"{turn.name}: the call was never announced; nothing to keep")
    return turn.body[: turn.frames[keep].end]



def caught(folder: str | os_PathLike, *, sample: int | None = None,
           read_size: int | None = None, seed: int = 0,
           max_bytes: int | None = SAMPLED_BYTES) -> pd.DataFrame:
    """Which faults each capture of ``folder`` catches (``breaker.catches``), on every capture
    or on a ``sample`` spread across formats and hosts (``corpus.sample``: each (format, host)
    once before any twice; a sample draws from captures of at most ``max_bytes``), never on
    the first files alphabetically, which in a folder of real recordings are one project's.
    ``attrs``: ``captures`` (how many the folder held), ``ran`` (how many were run) and
    ``how``, a phrase saying which were run."""
    from . import breaker  # which imports this module

    picks = corpus.sample(folder, sample, seed=seed, max_bytes=max_bytes)
    rows = []
    for turn, path in zip(picks["turn"], picks["path"], strict=True):
        one = breaker.catches(path, read_size=read_size)
        rows.append(one.assign(turn=turn))
    out = (pd.concat(rows, ignore_index=True) if rows
           else breaker.catches(b"", read_size=read_size).iloc[:0])
    total, ran = picks.attrs["captures"], len(picks)
    how = f"all {count(total, 'capture')}"
    if ran < total:
        covered = picks.groupby(["provider", "host"]).ngroups
        how = (f"a sample of {number(ran)} of {count(total, 'capture')}, drawn across "
               f"formats and hosts ({covered} of the folder's {picks.attrs['strata']} format "
               f"and host pairs; seed {seed})")
        if picks.attrs["too_large"]:
            how += (f", leaving out {count(picks.attrs['too_large'], 'capture')} over "
                    f"{number(max_bytes // 1024)} KiB")
    out.attrs.update(captures=total, ran=ran, how=how)
    return out


# -- what the five properties do not cover --------------------------------------------------
def needs(fault: str) -> str:
    """What a fixture must hold for ``fault`` to show, read from the turn the breaker shows it
    on (its preset): the quirk a server must send, the second call, the cut, the reads, the
    place a boundary must fall. The property of :data:`PROPERTIES` it is, where one is."""
    from . import breaker  # which imports this module

    s = breaker.PRESETS[fault]
    parts = []
    if s.quirks:
        parts.append(f"a server that sends {', '.join(s.quirks)} (no property: notebook 8)")
    if s.earlier is not None:
        parts.append(
            "two choices (n = 2) each calling at index 0 (no property)" if s.two_choices
            else "two calls whose fragments interleave (no property)" if s.interleave
            else "two calls to the same tool in one turn (two_calls is not enough: "
                 "their names must match)" if (s.earlier_tool or s.tool) == s.tool
            else "two calls in one turn (two_calls)")
    if s.cut_off:
        parts.append("a turn cut off right after a call's last fragment (cut_off cuts "
                     "mid-arguments: no property)" if s.end() == len(s.args)
                     else "a turn cut off in the middle of a call's arguments (cut_off)")
    if s.read_size:
        parts.append("socket reads that end inside a multi-byte character (no property: "
                     "replay in small reads)")
    if not parts and s.split:
        where = dict((at, label) for label, at in breaker.landmarks(s.args)).get(s.split)
        if where:
            parts.append(f"a fragment boundary {where.split(' (')[0]}"
                         + (" (escape_split)" if "escape" in where else " (no property)"))
    return "; ".join(parts) or "any call (every capture with one catches it)"


def adds(base: pd.DataFrame, more: pd.DataFrame) -> pd.DataFrame:
    """For each capture of ``more`` (a :func:`caught` table), the faults it catches that no
    capture of ``base`` does; those adding most first, none left out. Columns ``turn``,
    ``provider``, ``adds`` (the faults, comma-separated) and ``n``."""
    from .faults import FAULTS

    missed = [f for f in FAULTS if f in base and not base[f].any()]
    rows = [{"turn": r["turn"], "provider": r["provider"],
             "adds": ", ".join(f for f in missed if f in more and bool(r[f])),
             "n": sum(bool(r[f]) for f in missed if f in more)}
            for _, r in more.iterrows()]
    out = pd.DataFrame(rows, columns=["turn", "provider", "adds", "n"]).astype({"n": "int64"})
    return out.sort_values("n", ascending=False, kind="stable").reset_index(drop=True)
