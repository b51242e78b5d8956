"""Scanning a ``load()`` table for producer quirks: ``anomalies(deltas)``, one row per finding.

One pass over the rows that matter (calls, text, stop reasons, what the readers noted) gathers
each turn's evidence, keyed as the correct accumulator keys calls (by choice and block; a call
announced again at a used block is a new call; a finish with no block ends every call of its
choice); then every quirk's ``find`` reads that evidence. A turn with nothing unusual gives no
rows. The table is built from columns, never row by row through pandas, so it costs a fraction
of the ``load()`` that made the rows (``benchmarks/bench_anomalies.py``).
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import _columns as columns
from ..providers import FORMATS, WireFormat
from .quirks import QUIRKS, SEPARATORS, unmasked

ANOMALY_COLUMNS = ("turn", "provider", "choice", "call_id", "anomaly", "offset", "detail")
_KINDS = ("call_start", "args_delta", "block_stop", "args_done", "text_delta")
_READ = ("turn", "provider", "choice", "kind", "block", "call_id", "tool", "fragment",
         "offset", "frame", "final", "reason", "quirk")
SEPARATED = "[" + "".join(SEPARATORS) + "]"


@dataclass
class Seen:
    """One call as the stream delivered it."""

    choice: int | None
    block: int | None
    call_id: str | None
    tool: str | None
    at: int
    """Byte offset of its announcement (or of its first fragment, when it had none)."""
    frame: int
    announced: bool = True
    reused: bool = False
    """Announced at a block where an earlier call of the same turn stood."""
    fragments: list[str] = field(default_factory=list)
    """Its non-empty argument fragments, in order."""
    offsets: list[int] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    stopped: bool = False
    final: str | None = None
    """The whole argument string a done event repeated."""
    final_at: int | None = None


@dataclass
class Piece:
    """A text or argument fragment, where it stood."""

    text: str
    at: int
    choice: int | None
    call_id: str | None


@dataclass
class Note:
    """What a reader noted on a row (its ``quirk`` column), split into name and evidence."""

    quirk: str
    detail: str
    at: int
    choice: int | None
    call_id: str | None


@dataclass
class Channel:
    """One choice of a turn (the whole turn, for formats without choices)."""

    choice: int | None
    text: str = ""
    """Its text fragments joined."""
    starts: Any = None
    """Where each text fragment's first character falls in ``text`` (an array)."""
    offsets: Any = None
    """The byte offset of each text fragment's frame (an array)."""
    reason: str | None = None
    reason_at: int = 0
    order: list[int] = field(default_factory=list)
    """Which call (its position in the turn) each non-empty argument fragment went to."""

    def text_at(self, char: int) -> int:
        """The byte offset of the frame holding character ``char`` of the joined text."""
        if self.starts is None or not len(self.starts):
            return 0
        return int(self.offsets[max(0, bisect_right(self.starts, char) - 1)])


@dataclass
class TurnEvidence:
    """Everything one turn shows about its producer."""

    turn: str
    provider: str
    format: WireFormat | None
    calls: list[Seen] = field(default_factory=list)
    channels: dict[int | None, Channel] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)
    """The fragments that hold a character :data:`~.quirks.SEPARATORS` names."""

    def finding(self, anomaly: str, choice: int | None, call_id: str | None, at: int | None,
                detail: str) -> Finding:
        return (self.turn, self.provider, choice, call_id, anomaly, at or 0, detail)

    def channel(self, choice: int | None) -> Channel:
        ch = self.channels.get(choice)
        if ch is None:
            ch = self.channels[choice] = Channel(choice)
        return ch

    def frames_with_calls(self) -> dict[int, list[Seen]]:
        """Frames that announced a call together with its arguments, and those calls."""
        out: dict[int, list[Seen]] = {}
        for call in self.calls:
            if call.announced and call.frames and call.frames[0] == call.frame:
                out.setdefault(call.frame, []).append(call)
        return out


Finding = tuple[Any, ...]


def _column(rows: pd.DataFrame, name: str) -> Any:
    """A column as Python values, missing ones as None (absent columns: all None)."""
    if name not in rows:
        return [None] * len(rows)
    return rows[name].to_numpy(dtype=object, na_value=None)


def _calls(ev: TurnEvidence, rows: list[tuple[Any, ...]]) -> None:
    """One turn's call, stop and noted rows, in order, into its evidence."""
    calls = ev.calls
    open_: dict[tuple[Any, Any], int] = {}  # (choice, block) -> the call there now
    used: set[tuple[Any, Any]] = set()
    for choice, kind, block, call_id, tool, fragment, at, frame, final, reason, quirk in rows:
        key = (choice, block)
        if kind == "call_start":
            open_[key] = len(calls)
            calls.append(Seen(choice, block, call_id, tool, at, frame,
                              reused=block is not None and key in used))
            used.add(key)
        elif kind == "args_delta":
            if fragment:
                n = open_.get(key)
                if n is None:  # fragments for a call never announced: kept, so marked
                    n = open_[key] = len(calls)
                    calls.append(Seen(choice, block, call_id, tool, at, frame, announced=False))
                call = calls[n]
                call.fragments.append(fragment)
                call.offsets.append(at)
                call.frames.append(frame)
                ev.channel(choice).order.append(n)
        elif kind == "block_stop" or kind == "args_done":
            if block is None:  # Chat's finish_reason: every call of the choice is over
                for k in [k for k in open_ if k[0] == choice]:
                    calls[open_.pop(k)].stopped = True
            elif key in open_:
                call = calls[open_[key]]
                call.stopped = True
                if final is not None:  # the first event that repeats them is the evidence
                    call.final = final
                    call.final_at = at if call.final_at is None else call.final_at
                if kind == "block_stop":
                    del open_[key]
        if reason is not None:
            ch = ev.channel(choice)
            ch.reason, ch.reason_at = reason, at
        if quirk is not None:
            name, _, detail = quirk.partition(": ")
            n = open_.get(key)
            ev.notes.append(Note(name, detail or name, at, choice,
                                 calls[n].call_id if n is not None else call_id))


def evidence(deltas: pd.DataFrame) -> list[TurnEvidence]:
    """Each turn's evidence, in the order the turns appear."""
    kind = deltas["kind"]
    noted = kind.isin(_KINDS[:-1])
    for extra in ("reason", "quirk"):
        if extra in deltas:
            noted |= deltas[extra].notna()
    out: dict[tuple[str, str], TurnEvidence] = {}

    def turn_of(turn: Any, provider: Any) -> TurnEvidence:
        ev = out.get((turn, provider))
        if ev is None:
            ev = out[(turn, provider)] = TurnEvidence(str(turn), str(provider),
                                                      FORMATS.get(str(provider)))
        return ev

    rows = deltas[noted.to_numpy(dtype=bool)]
    cols = [_column(rows, c) for c in _READ]
    turns, providers = cols[0], cols[1]
    bounds = np.flatnonzero((turns[1:] != turns[:-1]) | (providers[1:] != providers[:-1])) + 1
    edges = [0, *bounds.tolist(), len(rows)]
    body = list(zip(*cols[2:], strict=True))
    for a, b in itertools.pairwise(edges):
        if b > a:
            _calls(turn_of(turns[a], providers[a]), body[a:b])
    # Text is only searched: joined per channel in C, placed by character when it matters.
    text = deltas[(kind == "text_delta").to_numpy(dtype=bool)]
    text = text[text["fragment"].notna().to_numpy(dtype=bool)]
    if len(text):
        keys = ["turn", "provider", "choice"] if "choice" in text else ["turn", "provider"]
        groups = text.groupby(keys, sort=False, dropna=False, observed=True)
        joined = groups["fragment"].agg("".join).tolist()  # in order of first appearance
        number = groups.ngroup().to_numpy()
        order = np.argsort(number, kind="stable")
        cuts = np.flatnonzero(np.diff(number[order])) + 1
        chars = text["chars"].to_numpy(dtype="int64", na_value=0)
        offsets = text["offset"].to_numpy(dtype="int64")
        heads = [_column(text, c) for c in ("turn", "provider", "choice")]
        for where, whole in zip(np.split(order, cuts), joined, strict=True):
            first = where[0]
            ch = turn_of(heads[0][first], heads[1][first]).channel(heads[2][first])
            lengths = chars[where]
            ch.text, ch.starts, ch.offsets = whole, np.cumsum(lengths) - lengths, offsets[where]
    # Fragments holding a line separator, found in C.
    frags = deltas["fragment"]
    odd = frags.notna() & frags.str.contains(SEPARATED, regex=True, na=False)
    for turn, provider, choice, call_id, fragment, at in zip(
            *(_column(deltas[odd.to_numpy(dtype=bool)], c) for c in (
                "turn", "provider", "choice", "call_id", "fragment", "offset")), strict=True):
        turn_of(turn, provider).pieces.append(Piece(fragment, int(at), choice, call_id))
    return list(out.values())


def anomalies(deltas: pd.DataFrame) -> pd.DataFrame:
    """One row per producer quirk found in ``deltas`` (what :func:`~streamcalls_lab.load`
    returns): ``turn``, ``provider``, ``choice``, ``call_id`` (NA when the finding is about
    the turn), ``anomaly`` (a name in :data:`~.quirks.QUIRKS`), ``offset`` (the byte offset of
    the evidence in the capture) and ``detail`` (the evidence, in a sentence). A turn with
    nothing unusual gives no rows. Quirks are findings, not errors: strict and lenient loads
    read such turns alike."""
    found: list[Finding] = []
    for turn in evidence(deltas):
        found += unmasked([f for quirk in QUIRKS.values() for f in quirk.find(turn)])
    found.sort(key=lambda f: (f[0], f[5]))
    cols = list(zip(*found, strict=True)) if found else [()] * len(ANOMALY_COLUMNS)
    return pd.DataFrame({
        "turn": columns.strings(cols[0]),
        "provider": columns.category(cols[1]),
        "choice": columns.ints(cols[2]),
        "call_id": columns.strings(cols[3]),
        "anomaly": columns.category(cols[4], tuple(QUIRKS)),
        "offset": np.asarray(cols[5], dtype="int64"),
        "detail": columns.strings(cols[6]),
    })
