"""Break a stream on purpose: one argument document, cut where you say, through every handler.

A :class:`Setup` describes one small turn: the argument text of a call, where its fragment
boundaries fall, the wire format, optional prose around it, an earlier call (sent before it,
interleaved with it, or as another choice's), whether the stream is cut off, and how big the
socket reads are. :func:`run` writes
the turn's bytes, feeds them to the correct :class:`~streamcalls_lab.Accumulator` and to
every fault variant, and returns what each one handed on, why it differs from the correct
one (the stepper's :func:`~streamcalls_lab.stepper.diverge`, so notebooks 3 and 4 give the
same reasons) and a character-level diff. No widgets and no HTML here: views only read a
:class:`Result`.

:func:`catches` is the same comparison over captured turns: which faults a fixture set
would catch at all.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import nh3
import pandas as pd
from markdown_it import MarkdownIt

from . import turns
from ._replay import Tape, read_all
from ._replay import tape as make_tape
from .accumulate import Accumulator, CallKey, Snapshot
from .check import (
    INTERLEAVING,
    MULTI_CHOICE,
    TURN_FORMATS,
    Call,
    Segment,
    Text,
    two_choice_turn,
)
from .faults import CORRECT, FAULTS, SPECS, MarkdownBubble, bubble_text
from .fixtures import escape_spans
from .generate import cut_at
from .loader import gc_paused, load
from .providers import FORMATS
from .sources import Source, resolve
from .stepper import VariantState, diverge

EARLIER_PIECE = 6  # characters per fragment of the earlier call: it is never the one studied
_WORDS = re.compile(r"\s*\S+|\s+$")
_MARKDOWN = frozenset("*_`#>~\\")


@dataclass(frozen=True)
class Setup:
    """One turn to break: a call's arguments, its cuts, and what surrounds it."""

    args: str
    """The argument text, sent verbatim (valid JSON or not)."""
    split: int | None = None
    """The movable fragment boundary (a code-point offset); 0, the end or None: no cut.
    With ``cut_off`` it is where the stream stops (None: after the last fragment)."""
    every: int = 0
    """Also cut every ``every`` characters (0: no other cuts)."""
    cuts: tuple[int, ...] = ()
    """Further exact boundaries."""
    provider: str = "anthropic-messages"
    tool: str = "create_ticket"
    earlier: str | None = None
    """Arguments of an earlier call in the same turn (None: no such call)."""
    earlier_tool: str | None = None
    """The earlier call's tool (None: the same tool as this call's)."""
    interleave: bool = False
    """Both calls announced first, then their fragments alternating (Chat and Responses)."""
    two_choices: bool = False
    """The earlier call is choice 0's and this one choice 1's, each at index 0, the choices'
    chunks alternating (Chat with ``n`` = 2)."""
    before: str = ""
    """Prose before the calls."""
    after: str = ""
    """Prose after the call (never sent when the stream is cut off)."""
    cut_off: bool = False
    """The stream stops at ``split`` (or after the last fragment): no stop event, no end."""
    read_size: int | None = None
    """Bytes per socket read (None: the whole body in one read)."""
    quirks: tuple[str, ...] = ()
    """Producer quirks the turn is written with (``producers.QUIRKS``), in the formats that
    can carry them all."""
    only: tuple[str, ...] = ()
    """The formats the turn is for (empty: every one that can carry it): a quirk that
    takes another shape elsewhere (a blank id on Chat's fragments is a blank ``item_id`` on
    Responses', which no fragment's call is read by)."""

    def end(self) -> int:
        """How many argument characters are sent."""
        if self.cut_off and self.split is not None and 0 <= self.split < len(self.args):
            return self.split
        return len(self.args)

    def boundaries(self) -> tuple[int, ...]:
        """Every fragment boundary strictly inside the text that is sent."""
        end = self.end()
        points = set(self.cuts)
        if self.every > 0:
            points.update(range(self.every, end, self.every))
        if self.split is not None:
            points.add(self.split)
        return tuple(sorted(p for p in points if 0 < p < end))

    def fragments(self) -> tuple[str, ...]:
        """The call's argument fragments as they go on the wire."""
        sent = self.args[: self.end()]
        return tuple(cut_at(sent, self.boundaries())) if sent else ()

    def formats(self) -> tuple[str, ...]:
        """The wire formats this turn can be written in."""
        if self.two_choices:
            return MULTI_CHOICE
        formats = INTERLEAVING if self.interleave else TURN_FORMATS
        return tuple(f for f in formats if set(self.quirks) <= set(FORMATS[f].quirks)
                     and (not self.only or f in self.only))


@dataclass(frozen=True)
class Span:
    """One stretch of a character-level diff: ``equal`` or what changed."""

    op: str
    """``equal``, ``replace``, ``delete`` (only in what was sent) or ``insert``."""
    sent: str
    got: str


@dataclass(frozen=True)
class CallDiff:
    """One call of a block: what the correct handler hands on, against what a variant does.

    A variant that hands on a second call for a block (a blank id taken for a new call) gets
    a second diff for that block, with ``sent`` None: the extra call.
    """

    block: Any
    tool: str | None
    """The correct handler's tool (the variant's when the correct one has no such call)."""
    sent: str | None
    """The correct handler's arguments (None: it hands nothing on for this block)."""
    got: str | None
    """The variant's arguments (None: it hands nothing on for this block)."""
    spans: tuple[Span, ...]
    got_tool: str | None = None
    """The tool the variant hands this call on under (None: no call, or no name)."""
    sent_id: Any = None
    """The correct handler's call id."""
    got_id: Any = None
    """The call id the variant hands this call on under."""

    @property
    def missing(self) -> bool:
        """The correct handler hands this call on and the variant does not."""
        return self.sent is not None and self.got is None

    @property
    def extra(self) -> bool:
        """The variant hands on a call the correct handler does not."""
        return self.sent is None and self.got is not None

    @property
    def renamed(self) -> bool:
        """Both hand the call on, under another tool name."""
        return self.sent is not None and self.got is not None and self.tool != self.got_tool

    @property
    def reidentified(self) -> bool:
        """Both hand the call on, under another call id."""
        return self.sent is not None and self.got is not None and self.sent_id != self.got_id

    @property
    def same(self) -> bool:
        return self.sent == self.got and not self.renamed and not self.reidentified


@dataclass(frozen=True)
class Bubble:
    """A message surface as a Markdown chat bubble renders it: strings to show, never render."""

    source: str
    """What was appended to the bubble."""
    html: str
    """The renderer's output after sanitising (shown escaped, as text)."""
    shown: str
    """The text the reader sees (and a copy button copies)."""
    lost: tuple[Span, ...]
    """``source`` against ``shown``, character by character: what the renderer ate."""


def bubble(source: str) -> Bubble:
    """Render ``source`` as a chat bubble would (markdown-it, then nh3), and diff the text."""
    html = nh3.clean(MarkdownIt("commonmark").render(source)).strip("\n")
    shown = bubble_text(source)
    return Bubble(source, html, shown, char_diff(source, shown))


@dataclass(frozen=True)
class Outcome:
    """What one handler made of the turn."""

    handler: str
    calls: tuple[dict[str, Any], ...]
    """What ``finish()`` handed on: ``block``, ``call_id``, ``tool``, ``args``."""
    message: str
    """The message surface."""
    error: str | None
    """``raised <Type>: <message>`` when the handler raised."""
    reason: str | None = None
    """Why this differs from the correct handler; None when it does not."""
    diffs: tuple[CallDiff, ...] = ()
    message_diff: tuple[Span, ...] = ()
    bubble: Bubble | None = None
    """What a chat bubble rendered of the message surface (handlers that render only)."""

    @property
    def broken(self) -> bool:
        return self.reason is not None


@dataclass(frozen=True)
class Result:
    """The turn as sent and every handler's outcome."""

    setup: Setup
    body: bytes
    reads: tuple[bytes, ...]
    fragments: tuple[str, ...]
    correct: Outcome
    faults: dict[str, Outcome] = field(default_factory=dict)

    def broken(self) -> list[str]:
        """The faults whose outcome differs from the correct one."""
        return [name for name, out in self.faults.items() if out.broken]

    def summary(self) -> pd.DataFrame:
        """One row per handler: what it handed on and why it differs."""
        rows = [{"handler": out.handler, "broken": out.broken, "reason": out.reason or "",
                 "calls": len(out.calls),
                 "args": " | ".join(str(c["args"]) for c in out.calls),
                 "message": out.message}
                for out in (self.correct, *self.faults.values())]
        return pd.DataFrame(rows).astype({"handler": "str", "reason": "str", "args": "str",
                                          "message": "str"})


# -- the turn -----------------------------------------------------------------------------
def _call_id(provider: str, n: int) -> str:
    return f"{FORMATS[provider].call_ids[0]}break{n:02d}"  # as the format's ids begin


def _prose(text: str) -> Text:
    return Text(tuple(_WORDS.findall(text)))


def segments(setup: Setup) -> list[Segment]:
    """The turn as the builder's segments: prose, the earlier call, the call, prose."""
    out: list[Segment] = []
    if setup.before:
        out.append(_prose(setup.before))
    if setup.earlier is not None:
        pieces = cut_at(setup.earlier, range(EARLIER_PIECE, len(setup.earlier), EARLIER_PIECE))
        out.append(Call(setup.earlier_tool or setup.tool, _call_id(setup.provider, 1),
                        tuple(pieces)))
    out.append(Call(setup.tool, _call_id(setup.provider, 2), setup.fragments()))
    if setup.after and not setup.cut_off:
        out.append(_prose(setup.after))
    return out


def turn_body(setup: Setup) -> bytes:
    """The SSE body of the turn ``setup`` describes."""
    if setup.provider not in TURN_FORMATS:
        raise ValueError(f"unknown wire format {setup.provider!r}; "
                         f"known: {', '.join(TURN_FORMATS)}")
    if setup.provider not in setup.formats():
        can = ", ".join(setup.formats()) or "none of the kit's formats"
        raise ValueError(f"{setup.provider} cannot carry this turn (interleaved calls, two "
                         f"choices or the server quirks chosen); these can: {can}")
    bad = [c for c in (*setup.cuts, *([setup.split] if setup.split is not None else []))
           if not 0 <= c <= len(setup.args)]
    if bad:
        raise ValueError(f"cuts {bad} lie outside the {len(setup.args)}-character arguments")
    parts = segments(setup)
    if setup.two_choices:
        if setup.earlier is None or setup.cut_off:
            raise ValueError("two choices need an earlier call (choice 0's), and cannot be "
                             "cut off")
        # the earlier call is choice 0's; the prose goes with this call, in choice 1
        earlier = next(p for p in parts if isinstance(p, Call))
        return two_choice_turn([earlier, [p for p in parts if p is not earlier]], setup.provider)
    return turns.turn_bytes(setup.provider, turns.script(
        parts, cut=setup.cut_off, interleave=setup.interleave, quirks=frozenset(setup.quirks)))


def split_reads(body: bytes, read_size: int | None) -> tuple[bytes, ...]:
    """The body as socket reads of ``read_size`` bytes (one read when None)."""
    if read_size is None:
        return (body,)
    if read_size < 1:
        raise ValueError("read_size must be at least 1")
    return tuple(body[i : i + read_size] for i in range(0, len(body), read_size))


# -- the diff -----------------------------------------------------------------------------
@lru_cache(maxsize=256)  # a refresh diffs mostly what the last one did (a slider moved)
def char_diff(sent: str, got: str) -> tuple[Span, ...]:
    """Character-level difference (difflib, no junk heuristic), as spans a view can mark."""
    if sent == got:  # difflib's answer, without its search (quadratic on long text)
        return (Span("equal", sent, got),) if sent else ()
    matcher = difflib.SequenceMatcher(None, sent, got, autojunk=False)
    return tuple(Span(op, sent[a0:a1], got[b0:b1])
                 for op, a0, a1, b0, b1 in matcher.get_opcodes())


def _call_diffs(correct: Sequence[Mapping[str, Any]],
                got: Sequence[Mapping[str, Any]]) -> tuple[CallDiff, ...]:
    # keyed by (choice, block): two choices' calls may share a block; a key's calls are
    # paired in order, so a second call a variant hands on for one block is drawn as extra
    want: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    have: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for calls, into in ((correct, want), (got, have)):
        for c in calls:
            into.setdefault((c.get("choice"), c["block"]), []).append(c)
    out = []
    for key in [*want, *(k for k in have if k not in want)]:
        ws, hs = want.get(key, []), have.get(key, [])
        for i in range(max(len(ws), len(hs))):
            w = ws[i] if i < len(ws) else None
            h = hs[i] if i < len(hs) else None
            sent = None if w is None else str(w["args"])
            args = None if h is None else str(h["args"])
            tool = (w or h or {}).get("tool")
            out.append(CallDiff(CallKey(*key), tool, sent, args,
                                char_diff(sent or "", args or ""),
                                got_tool=None if h is None else h.get("tool"),
                                sent_id=None if w is None else w.get("call_id"),
                                got_id=None if h is None else h.get("call_id")))
    return tuple(out)


# -- running (every handler on one tape of the byte layer: ._replay) -----------------------
def _feed(name: str, cls: type[Accumulator], reads: Sequence[bytes],
          tape: Tape | None = None) -> tuple[Outcome, Snapshot]:
    handler = cls()
    calls: list[dict[str, Any]] = []
    error = None
    try:
        read_all(handler, reads, tape)
        calls = handler.finish()
    except Exception as e:  # a faulty handler raising is one of the outcomes shown
        error = f"raised {type(e).__name__}: {e}"
    kept = tuple({k: c.get(k) for k in ("block", "choice", "call_id", "tool", "args")}
                 for c in calls)
    shown = bubble(handler.message) if isinstance(handler, MarkdownBubble) else None
    return Outcome(name, kept, handler.message, error, bubble=shown), handler.snapshot()


def compare(
    reads: Sequence[bytes], faults: Mapping[str, type[Accumulator]] | None = None
) -> tuple[Outcome, dict[str, Outcome]]:
    """Feed the same socket reads to the correct handler and to each fault; compare them."""
    with gc_paused():  # a 1-byte read each: hundreds of thousands of short-lived lists
        tape = make_tape(reads)
        correct, want = _feed(CORRECT, Accumulator, reads, tape)
        out = {}
        for name, cls in (FAULTS if faults is None else faults).items():
            got, snap = _feed(name, cls, reads, tape)
            reason = diverge(want, VariantState(snap, got.error))
            out[name] = replace(got, reason=reason,
                                diffs=_call_diffs(correct.calls, got.calls),
                                message_diff=char_diff(correct.message, got.message))
    return correct, out


def run(setup: Setup, faults: Mapping[str, type[Accumulator]] | None = None) -> Result:
    """Write the turn, feed it to every handler, and compare each with the correct one."""
    body = turn_body(setup)
    reads = split_reads(body, setup.read_size)
    correct, outcomes = compare(reads, faults)
    return Result(setup, body, reads, setup.fragments(), correct, outcomes)


def catches(source: Source, *, read_size: int | None = None,
            limit: int | None = None) -> pd.DataFrame:
    """Which faults each captured turn catches: a fault is caught when its outcome differs.

    Each turn is fed in its recorded reads (or in ``read_size``-byte reads), so
    ``decode_chunks`` is caught only where a read really ends inside a character.
    One row per turn: ``turn``, ``provider``, a bool per fault, and ``caught`` (how many).
    ``limit`` keeps the first that many captures (a large folder takes minutes); the
    table's ``attrs["captures"]`` says how many the source held.
    """
    rows = []
    found = resolve(source)
    for cap in found[:limit]:
        chunks = [c[1] if isinstance(c, tuple) else bytes(c) for c in cap.chunks]
        body = b"".join(chunks)
        reads = split_reads(body, read_size) if read_size is not None else tuple(chunks)
        _, outcomes = compare(reads)
        events = load(body, name=cap.name, strict=False)
        provider = str(events["provider"].iloc[0]) if len(events) else "unknown"
        row: dict[str, Any] = {"turn": cap.name, "provider": provider}
        row |= {name: out.broken for name, out in outcomes.items()}
        row["caught"] = sum(out.broken for out in outcomes.values())
        rows.append(row)
    columns = ["turn", "provider", *FAULTS, "caught"]
    out = pd.DataFrame(rows, columns=columns).astype(
        {"turn": "str", "provider": "str", "caught": "int64"} | dict.fromkeys(FAULTS, bool))
    out.attrs["captures"] = len(found)
    return out


# -- places worth cutting -------------------------------------------------------------------
def in_string(args: str) -> list[bool]:
    """For each character: is it inside a JSON string literal (between its quotes)?"""
    inside, escaped, out = False, False, []
    for ch in args:
        if inside and not escaped and ch == '"':
            inside = False
            out.append(False)
            continue
        out.append(inside)
        if not inside and ch == '"':
            inside = True
        escaped = inside and not escaped and ch == "\\"
    return out


def landmarks(args: str, per_kind: int = 2) -> list[tuple[str, int]]:
    """Labelled boundaries where a split bites: inside escapes, before spaces in strings,
    between digits, before Markdown syntax in values; at most ``per_kind`` of each."""
    inside = in_string(args)
    found: list[tuple[str, int]] = []
    for start, end in escape_spans(args)[:per_kind]:
        at = start + (4 if args[start + 1 : start + 2] == "u" and end - start == 6 else 1)
        found.append((f"inside the escape {args[start:end]} ({args[start:at]} | "
                      f"{args[at:end]})", at))
    kinds = (
        ("before a space inside a string", lambda i: args[i] == " " and inside[i]),
        ("between two digits", lambda i: args[i - 1].isdigit() and args[i].isdigit()
         and not inside[i]),
        ("before Markdown syntax in a value", lambda i: args[i] in _MARKDOWN and inside[i]
         and args[i] != "\\"),
    )
    for label, test in kinds:
        hits = [i for i in range(1, len(args)) if test(i)][:per_kind]
        found += [(f"{label} (at {i})", i) for i in hits]
    close = args.rstrip().rfind("}")
    if close > 0:
        found.append((f"just before the closing brace (at {close})", close))
    seen: set[int] = set()
    out = []
    for label, at in sorted(found, key=lambda x: x[1]):
        if at not in seen:
            seen.add(at)
            out.append((label, at))
    return out


# -- one setup per fault, each chosen so that fault bites -----------------------------------
class _Presets(Mapping[str, Setup]):
    """The specs' presets as setups, read when asked: a registered class's is here too."""

    def __getitem__(self, name: str) -> Setup:
        preset = SPECS[name].preset
        if preset is None:
            raise KeyError(name)
        return Setup(**preset)

    def __iter__(self) -> Iterator[str]:
        return (name for name, spec in SPECS.items() if spec.preset is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


PRESETS: Mapping[str, Setup] = _Presets()
"""A setup per ``FAULTS`` name in which that fault gives a wrong result (each spec's
``preset``)."""
