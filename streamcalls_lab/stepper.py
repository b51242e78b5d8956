"""A pure model of one turn, event by event: what every handler holds at each step.

:class:`Stepper` walks a turn forward and back. At step ``i`` (after event ``i``) it
shows the event, its raw frame, the correct handler's buffers, message surface and
finished calls, the same for every fault variant, and which variants have diverged from
the correct one, with a short reason. No widgets and no IPython here: a view only reads
:class:`Step`.

Steps are computed forward once and kept, so going back returns exactly what going
forward produced, and a slider over a few hundred events never recomputes. When the
turn's bytes are known, every handler is fed through ``feed_bytes`` in socket reads
(the recorded ones, or ``read_size`` bytes each), so a byte-level fault shows up at the
step whose read broke it.

A play button should move at the pace the turn was recorded at, without a thread: the
view's clock (``ipywidgets.Play``) counts milliseconds, and :func:`step_at` says which step
that moment has reached; :func:`history` says, for every fault variant, when it first went
wrong and whether it is still wrong now.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

import pandas as pd

from ._replay import Replay, Tape, shares_byte_layer
from .accumulate import Accumulator, CallKey, Snapshot, present
from .faults import CORRECT, FAULTS
from .framing import eventstream
from .loader import frames, load
from .sources import Source, resolve
from .turns import Call, Script, Segment, Text, turn_bytes

_SHOWN = 24  # characters of a value quoted in a reason


@dataclass(frozen=True)
class VariantState:
    """One handler after a step: its snapshot, or why it stopped."""

    snapshot: Snapshot
    """The last state it reached (before an exception, if it raised)."""
    error: str | None = None
    """``raised <Type> at step <i>: <message>``, once the handler has raised."""


@dataclass(frozen=True)
class Step:
    """Everything known after one event."""

    index: int
    event: dict[str, Any]
    """The event's row, missing values as None."""
    frame: str | None
    """The raw SSE frame as it stood on the wire (the ``data`` text when bytes are unknown)."""
    correct: VariantState
    variants: dict[str, VariantState]
    """Every fault variant, by its ``FAULTS`` name."""
    diverged: dict[str, str] = field(default_factory=dict)
    """The variants that differ from the correct handler now, with why."""

    @property
    def buffers(self) -> dict[Hashable, str]:
        """The correct handler's argument buffers, keyed by (choice, block)."""
        return self.correct.snapshot.buffers

    @property
    def message(self) -> str:
        """The correct handler's message surface."""
        return self.correct.snapshot.message

    @property
    def finished(self) -> tuple[dict[str, Any], ...]:
        """What the correct handler would hand on now."""
        return self.correct.snapshot.finished


def _short(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


def _done(snapshot: Snapshot) -> dict[CallKey, str]:
    return {CallKey(c.get("choice"), c["block"]): c["args"] for c in snapshot.finished}


def _calls(snapshot: Snapshot) -> list[tuple[Any, ...]]:
    """Every call handed on, in a fixed order: (choice, block, id, tool, args)."""
    return sorted(((c.get("choice"), c["block"], c["call_id"], c["tool"], c["args"])
                   for c in snapshot.finished), key=repr)


def _held(buffers: Mapping[Hashable, str], key: Hashable) -> str | None:
    """A variant's buffer for the correct handler's key: under that key, or under the block
    alone (a variant that ignores the choice, the same on a turn with one)."""
    if key in buffers:
        return buffers[key]
    return buffers.get(key.block) if isinstance(key, CallKey) else None


def diverge(correct: Snapshot, variant: VariantState) -> str | None:
    """Why a variant's state differs from the correct one's, in a phrase; None if it does not."""
    if variant.error is not None:
        return variant.error
    got = variant.snapshot
    want_done = _done(correct)
    got_done = _done(got)
    for block, args in got_done.items():
        if block not in want_done:
            return f"handed on block {block} before its stop, as {_short(args)}"
    for block, want in correct.buffers.items():
        have = _held(got.buffers, block)
        if have is None:
            filed = ", ".join(_short(k) if isinstance(k, str) else repr(k)
                              for k in list(got.buffers)[:3])
            return f"has no buffer for block {block}" + (
                f" (it files them under {filed})" if filed else "")
        if have != want:
            if have.endswith(want) and len(have) > len(want):
                return f"block {block}: its buffer already holds another call's arguments"
            if have.startswith(want) and len(have) > len(want) and want:
                return f"block {block}: its buffer also holds a later call's arguments"
            at = _first_difference(want, have)
            return (f"block {block}: buffer differs at char {at}: sent "
                    f"{_short(want[at:at + 12])}, holds {_short(have[at:at + 12])}")
    for block, want in want_done.items():
        if block not in got_done:
            return f"never hands on block {block}"
        if got_done[block] != want:
            return f"hands on block {block} as {_short(got_done[block])}"
    wanted, handed = _calls(correct), _calls(got)  # two calls at one block, a name changed
    if len(handed) != len(wanted):
        return f"hands on {len(handed)} call(s) where {len(wanted)} were sent"
    for want, have in zip(wanted, handed, strict=True):
        if want != have:
            return (f"hands on block {have[1]} under id {_short(str(have[2]))} and tool "
                    f"{_short(str(have[3]))}: sent under {_short(str(want[2]))}, "
                    f"{_short(str(want[3]))}")
    if got.message != correct.message:
        if any(b and b[:6] in got.message for b in correct.buffers.values()):
            return "argument text on the message surface"
        return f"message surface differs: {_short(got.message)}"
    return None


class _Runner:
    """One handler, fed one event per step (from bytes when there are bytes).

    A handler that reads bytes through the base class's byte layer is given a replay of
    ``tape`` (the decoder run once over the reads) as its decoder: every handler would
    otherwise decode every read again, which in reads of one byte is most of the work."""

    def __init__(self, cls: type, events: list[dict[str, Any]],
                 reads: list[bytes] | None, tape: Tape | None = None) -> None:
        self.acc = cls()
        self.events = events
        self.reads = deque(reads) if reads is not None else None
        self.replay = None
        if tape is not None and shares_byte_layer(cls):
            self.replay = Replay(tape)
            self.acc.use_decoder(self.replay)
        self.queue: deque[dict[str, Any]] = deque()
        self.closed = False
        self.fed = 0
        self.state = VariantState(self.acc.snapshot())

    def _events(self, chunk: bytes) -> list[dict[str, Any]]:
        """``events_from_bytes`` of one read, from the tape where the handler shares it (as
        dicts of its own: a handler may keep or change what it is fed)."""
        if self.replay is None:
            return self.acc.events_from_bytes(chunk)
        return [dict(e) for e in self.replay.events(self.acc.read(chunk))]

    def _next_event(self) -> dict[str, Any] | None:
        if self.reads is None:
            return self.events[self.fed] if self.fed < len(self.events) else None
        while not self.queue:
            if self.reads:
                self.queue.extend(self._events(self.reads.popleft()))
            elif not self.closed:
                self.closed = True
                self.queue.extend(self.acc.close_bytes())
            else:
                return None
        return self.queue.popleft()

    def advance(self, step: int) -> VariantState:
        if self.state.error is not None:
            return self.state
        try:
            event = self._next_event()
            if event is not None:
                self.acc.feed(event)
                self.fed += 1
            self.state = VariantState(self.acc.snapshot())
        except Exception as e:  # a faulty handler raising is what the stepper shows
            self.state = VariantState(self.state.snapshot,
                                      f"raised {type(e).__name__} at step {step}: {e}")
        return self.state


def _one_turn(deltas: pd.DataFrame, turn: str | None) -> pd.DataFrame:
    turns = list(dict.fromkeys(deltas["turn"]))
    if not turns:
        raise ValueError("no events to step through")
    name = turns[0] if turn is None else turn
    if name not in turns:
        raise ValueError(f"no turn {name!r}; turns: {', '.join(map(str, turns[:5]))}…")
    return deltas[deltas["turn"] == name].reset_index(drop=True)


def _reads(chunks: list[bytes | tuple[float, bytes]], read_size: int | None) -> list[bytes]:
    body = b"".join(c[1] if isinstance(c, tuple) else bytes(c) for c in chunks)
    if read_size is not None:
        if read_size < 1:
            raise ValueError("read_size must be at least 1")
        return [body[i:i + read_size] for i in range(0, len(body), read_size)]
    return [c[1] if isinstance(c, tuple) else bytes(c) for c in chunks]


def frame_shown(body: bytes, offset: int, end: int) -> str:
    """The bytes of one frame as the raw-frame panel shows them: text framings as their
    UTF-8 text, an AWS event-stream message (binary) decoded into its sizes, headers and
    payload, never its prelude and CRCs read as text."""
    raw = body[offset:end]
    if raw and eventstream.is_eventstream(body[:1]):
        return eventstream.describe(raw)
    return raw.decode("utf-8", "replace")


class Stepper:
    """Step through one turn, forward and back, seeing every handler's state.

    ``source`` is a ``load()`` dataframe (one turn is picked by ``turn``, else the first)
    or any source ``load`` takes (its first capture, or the one named ``turn``; ``name``
    names an in-memory source's turn, as ``load`` takes it). With a source, the handlers
    are fed the bytes in the recorded reads, or in reads of ``read_size`` bytes; a dataframe
    has no bytes, so they are fed its events.
    """

    def __init__(
        self,
        source: Source | pd.DataFrame,
        *,
        turn: str | None = None,
        faults: Mapping[str, type] | None = None,
        read_size: int | None = None,
        name: str | None = None,
    ) -> None:
        self.faults = dict(FAULTS if faults is None else faults)
        self.reads: list[bytes] | None = None
        frame_text: dict[int, str] = {}
        if isinstance(source, pd.DataFrame):
            self.events = _one_turn(source, turn)
        else:
            captures = resolve(source, name)
            if turn is not None:
                captures = [c for c in captures if c.name == turn]
            if not captures:
                raise ValueError(f"no capture {turn!r} in this source")
            cap = captures[0]
            self.reads = _reads(list(cap.chunks), read_size)
            body = b"".join(self.reads)
            self.events = load(body, name=cap.name, strict=False, raw=True)
            for fr in frames(body, strict=False):
                frame_text[fr.offset] = frame_shown(body, fr.offset, fr.end)
        self.turn = str(self.events["turn"].iloc[0]) if len(self.events) else ""
        records = [{k: present(v) for k, v in row.items()}
                   for row in self.events.to_dict("records")]
        self._records = records
        self._frames = [frame_text.get(r["offset"]) or r.get("data") for r in records]
        tape = Tape(self.reads) if self.reads else None  # (no reads: nothing to share)
        self._runners = {CORRECT: _Runner(Accumulator, records, self.reads, tape)} | {
            name: _Runner(cls, records, self.reads, tape) for name, cls in self.faults.items()}
        self._steps: list[Step] = []
        self.index = 0

    # -- moving ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._records)

    def state(self, i: int) -> Step:
        """The step after event ``i``, computed once (from the last one known)."""
        if not 0 <= i < len(self):
            raise IndexError(f"step {i} outside 0..{len(self) - 1}")
        while len(self._steps) <= i:
            self._steps.append(self._compute(len(self._steps)))
        return self._steps[i]

    @property
    def step(self) -> Step:
        return self.state(self.index)

    def go(self, i: int) -> Step:
        step = self.state(i)
        self.index = i
        return step

    def forward(self) -> Step:
        return self.go(min(self.index + 1, len(self) - 1))

    def back(self) -> Step:
        return self.go(max(self.index - 1, 0))

    # -- computing -------------------------------------------------------------------
    def _compute(self, i: int) -> Step:
        states = {name: runner.advance(i) for name, runner in self._runners.items()}
        correct = states.pop(CORRECT)
        diverged = {}
        for name, state in states.items():
            reason = diverge(correct.snapshot, state)
            if reason is not None:
                diverged[name] = reason
        return Step(i, self._records[i], self._frames[i], correct, states, diverged)

    def timeline(self) -> pd.DataFrame:
        """One row per step and variant that has diverged: when each one went wrong."""
        rows = []
        for i in range(len(self)):
            step = self.state(i)
            for name, reason in step.diverged.items():
                rows.append({"step": i, "seq": step.event.get("seq"), "variant": name,
                             "reason": reason})
        return pd.DataFrame(rows, columns=["step", "seq", "variant", "reason"]).astype(
            {"step": "int64", "variant": "str", "reason": "str"})


def first_divergence(stepper: Stepper, upto: int | None = None) -> dict[str, tuple[int, str]]:
    """For each variant that diverges by step ``upto`` (default: the last), the first step
    where it does, and why."""
    last = len(stepper) - 1 if upto is None else upto
    out: dict[str, tuple[int, str]] = {}
    for i in range(last + 1):
        for name, reason in stepper.state(i).diverged.items():
            out.setdefault(name, (i, reason))
    return out


def divergence_step(stepper: Stepper, variant: str | None = None) -> int | None:
    """Where a jump to the first divergence lands: the first step at which ``variant``
    differs from the correct handler, or (``variant`` None or the correct handler itself)
    at which any variant does; None when none ever does on this turn."""
    first = first_divergence(stepper)
    if variant is not None and variant != CORRECT:
        return first[variant][0] if variant in first else None
    return min((step for step, _ in first.values()), default=None)


def still_step(stepper: Stepper) -> int:
    """The step a still (a page with no kernel behind it) shows: a call half sent.

    The middle argument fragment of the call sent in the most fragments (the first such,
    on a tie), so its buffer is part filled and the variants have had time to go wrong;
    the middle event when no call is sent in two fragments or more; 0 for a turn of one
    event or none.
    """
    fragments: dict[tuple[Any, Any], list[int]] = {}
    for i, r in enumerate(stepper._records):
        if r.get("kind") == "args_delta" and r.get("fragment"):
            fragments.setdefault((r.get("choice"), r.get("block")), []).append(i)
    steps = max(fragments.values(), key=len, default=[])
    if len(steps) >= 2:
        return steps[(len(steps) - 1) // 2]
    return max(len(stepper) - 1, 0) // 2


# -- a picker's choices: the captures of a folder ----------------------------------------------
@dataclass(frozen=True)
class Choice:
    """One capture a picker offers: its name, and what a :class:`Stepper` is built from."""

    label: str
    """The capture's turn name (its path below the folder, without the suffix)."""
    source: Source
    """Its file when it has one (so its timing sidecar is read), else the whole source."""
    turn: str | None
    """The turn to pick from ``source``; None when ``source`` is the capture's own file."""
    problem: str | None = None
    """Why it cannot be stepped through (a dangling symlink, an unreadable file), or None."""

    def stepper(self, **options: Any) -> Stepper:
        """A :class:`Stepper` of this capture (``options`` as :class:`Stepper` takes them)."""
        if self.problem is not None:
            raise ValueError(f"{self.label}: {self.problem}")
        return Stepper(self.source, turn=self.turn, **options)


def choices(source: Source) -> list[Choice]:
    """Every capture of ``source`` (a folder, a glob, a HAR file or one capture) a picker
    offers, in the order ``load`` reads them; an entry that cannot be read is offered with
    its problem (never left out in silence)."""
    out = []
    for cap in resolve(source, require=True):
        problem = cap.problem.reason if cap.problem is not None else None
        own = cap.path is not None and cap.path.suffix.lower() != ".har"
        out.append(Choice(cap.name, cap.path if own else source, None if own else cap.name,
                          problem))
    return out


# -- playback: the recorded clock and the history so far -------------------------------------
# What a stepper view needs beyond one step: the recorded clock and the history so far.
#
# A play button should move at the pace the turn was recorded at, without a thread: the
# view's clock (``ipywidgets.Play``) counts milliseconds, and :func:`step_at` says which
# step that moment has reached. :func:`history` says, for every fault variant, when it
# first went wrong and whether it is still wrong now (a variant that handed a call on early
# can agree again once the stop arrives). :func:`play_range`, :func:`step_of` and
# :func:`ms_of` map between that clock and the steps, so a view only links two widgets.
FALLBACK_GAP = 0.1
"""Seconds between steps when a turn has no recorded timing."""
TICK_MS = 50
"""Milliseconds between a play clock's ticks at a multiple of the recorded pace."""
HISTORY_COLUMNS = ("variant", "first_step", "first_reason", "now")


@dataclass(frozen=True)
class Clock:
    """When each step's event arrived, in seconds since the first byte (never decreasing)."""

    times: tuple[float, ...]
    recorded: bool
    """False when the turn had no timing and the steps are spaced evenly."""

    @property
    def duration(self) -> float:
        return self.times[-1] if self.times else 0.0

    def at(self, seconds: float) -> int:
        """The step reached ``seconds`` after the first byte."""
        return step_at(self.times, seconds)


def clock(stepper: Stepper, source: Any = None, *, gap: float = FALLBACK_GAP) -> Clock:
    """The recorded pace of a stepper's turn.

    Taken from the stepper's events, or, when those carry no time (a stepper fed bytes),
    from ``load(source)`` for the same turn: the timing sidecar beside a capture file.
    Events with no time get the time of the one before; a turn with no timing at all is
    spaced one event every ``gap`` seconds.
    """
    events = stepper.events
    times = events["t"].astype("float64")
    if times.isna().all() and isinstance(source, (str, PathLike)):
        timed = load(source, strict=False)
        timed = timed[timed["turn"] == stepper.turn]
        by_seq = dict(zip(timed["seq"], timed["t"].astype("float64"), strict=True))
        times = events["seq"].map(by_seq).astype("float64")
    if times.isna().all():
        return Clock(tuple(i * gap for i in range(len(events))), False)
    filled = times.ffill().fillna(0.0).cummax()
    return Clock(tuple(float(t) for t in filled), True)


def step_at(times: Sequence[float], seconds: float) -> int:
    """The last step whose event had arrived ``seconds`` after the first byte."""
    if not times:
        raise ValueError("no steps")
    return min(max(bisect_right(times, seconds) - 1, 0), len(times) - 1)


def play_range(clock: Clock, speed: float, tick_ms: int) -> tuple[int, int]:
    """The play clock's ``(step, max)`` in recorded milliseconds at ``speed``.

    A play widget adds ``step`` each tick and stops before it would pass ``max``. With
    ``max`` one step short of a step past the end, the last value it reaches is at or past
    the turn's last event from any starting value, at any speed, so the last step (the last
    call's stop, when it is handed on) is always shown.
    """
    if speed <= 0:
        raise ValueError("speed must be positive")
    step = max(1, round(tick_ms * speed))
    # at least 1 ms: a turn whose events all share t = 0 still plays past its start
    return step, max(math.ceil(clock.duration * 1000), 1) + step - 1


def step_of(clock: Clock, ms: int) -> int:
    """The step a play clock at ``ms`` shows: step 0 at the start, then the last arrived."""
    return 0 if ms <= 0 or not clock.times else clock.at(ms / 1000)


def ms_of(clock: Clock, step: int) -> int:
    """Where a play clock stands when the reader moves to ``step``: the first millisecond
    at or after its event (truncating would stand before it, on the step before)."""
    return math.ceil(round(clock.times[step] * 1000, 6)) if clock.times else 0


def history(stepper: Stepper, upto: int) -> pd.DataFrame:
    """Per variant: the first step (up to ``upto``) at which it diverged, why, and why now.

    ``first_step`` is NA and both reasons empty for a variant that has not gone wrong yet;
    ``now`` is empty when it agrees with the correct handler at ``upto``.
    """
    first = first_divergence(stepper, upto)
    now = stepper.state(upto).diverged
    rows = [{"variant": name, "first_step": first[name][0] if name in first else None,
             "first_reason": first.get(name, (None, ""))[1], "now": now.get(name, "")}
            for name in stepper.faults]
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS)).astype(
        {"variant": "str", "first_step": "Int64", "first_reason": "str", "now": "str"})


# -- speeds: multiples of the recorded pace, or a fixed number of events a second -----------
@dataclass(frozen=True)
class Speed:
    """How fast play moves: ``factor`` times the recorded pace, or ``per_second`` events a
    second whatever the recording (slow enough to narrate, one event after another)."""

    label: str
    factor: float | None = None
    per_second: float | None = None

    def __post_init__(self) -> None:
        if (self.factor is None) == (self.per_second is None):
            raise ValueError("a speed is a factor of the recorded pace or events a second")
        if (self.factor or self.per_second or 0) <= 0:
            raise ValueError("speed must be positive")


SPEEDS = (
    Speed("2 events a second", per_second=2.0), Speed("5 events a second", per_second=5.0),
    Speed("½× recorded", 0.5), Speed("recorded pace", 1.0), Speed("2×", 2.0),
    Speed("5×", 5.0), Speed("20×", 20.0),
)
"""The speeds a stepper view offers, slowest first."""
RECORDED = SPEEDS[3]


@dataclass(frozen=True)
class Pace:
    """A play clock at one speed: every ``interval`` ms it adds ``step`` to its value and
    stops before passing ``max``. Its value is recorded milliseconds, or (``per_event``)
    the step itself; :meth:`step_of` and :meth:`value_of` map between value and step."""

    interval: int
    step: int
    max: int
    per_event: bool
    clock: Clock

    def step_of(self, value: int) -> int:
        """The step a play clock at ``value`` shows."""
        if self.per_event:
            return min(max(int(value), 0), max(len(self.clock.times) - 1, 0))
        return step_of(self.clock, value)

    def value_of(self, step: int) -> int:
        """Where the play clock stands when the reader moves to ``step``."""
        return step if self.per_event else ms_of(self.clock, step)

    @property
    def seconds(self) -> float:
        """How long play takes from step 0 to the last step: a tick every ``interval`` ms,
        as many ticks as fit under ``max``."""
        return self.max // self.step * self.interval / 1000


def pace(clock: Clock, speed: Speed | float, tick_ms: int = TICK_MS) -> Pace:
    """The play clock for ``speed`` (a :class:`Speed`, or a bare factor of the recorded
    pace): at a factor it ticks every ``tick_ms`` over recorded milliseconds
    (:func:`play_range`); at ``per_second`` events a second it moves one step a tick, every
    ``1000 / per_second`` ms, and ends on the last step."""
    if not isinstance(speed, Speed):
        speed = Speed(f"{speed}×", float(speed))
    if speed.per_second is not None:
        return Pace(max(1, round(1000 / speed.per_second)), 1,
                    max(len(clock.times) - 1, 0), True, clock)
    step, end = play_range(clock, float(speed.factor or 1.0), tick_ms)
    return Pace(tick_ms, step, end, False, clock)


# -- a relayed turn: the provider's stream beside the browser-side one sent on from it ------
BROWSER = "ai-sdk-ui"
"""The browser-side stream a relay writes by default: what ``useChat`` reads."""


def script_of(stepper: Stepper) -> Script:
    """The turn a stepper's events tell, as a :class:`~streamcalls_lab.turns.Script` a
    writer can send on: its text and its calls, in order, each fragment as it came.

    A call never stopped ends a cut turn (it must be the last segment); calls whose
    fragments alternate make an interleaved one. A turn of several choices, or a call
    with no tool name, is no turn an app sends on whole: a ``ValueError`` says so.
    """
    segments: list[Text | list[Any]] = []
    calls: dict[tuple[Any, Any], list[Any]] = {}  # (choice, block) -> [tool, id, fragments]
    stopped: set[tuple[Any, Any]] = set()
    order: list[tuple[Any, Any]] = []  # the call each argument fragment went to
    if len({r.get("choice") for r in stepper._records} - {None}) > 1:
        raise ValueError(f"{stepper.turn}: a turn of several choices; an app sends one on")
    for r in stepper._records:
        kind, key = r.get("kind"), (r.get("choice"), r.get("block"))
        if kind == "text_delta" and r.get("fragment"):
            if segments and isinstance(segments[-1], Text):
                segments[-1] = Text((*segments[-1].fragments, r["fragment"]))
            else:
                segments.append(Text((r["fragment"],)))
        elif kind == "call_start" and key not in calls:
            if r.get("tool") is None:
                raise ValueError(f"{stepper.turn}: the call at block {key[1]} has no tool name")
            calls[key] = [r["tool"], r.get("call_id") or f"call_{len(calls)}", []]
            segments.append(calls[key])
        elif kind == "args_delta" and key in calls and r.get("fragment"):
            calls[key][2].append(r["fragment"])
            order.append(key)
        elif kind in ("block_stop", "call_stop") and key in calls:
            stopped.add(key)
    done = stepper.state(len(stepper) - 1).finished if len(stepper) else ()
    stopped |= {(c.get("choice"), c["block"]) for c in done}
    open_ = [k for k in calls if k not in stopped]
    if len(open_) > 1 or (open_ and segments[-1] is not calls[open_[0]]):
        raise ValueError(f"{stepper.turn}: a call left open before the end of the turn")
    runs = [k for n, k in enumerate(order) if n == 0 or order[n - 1] != k]
    out = tuple(Call(s[0], str(s[1]), tuple(s[2])) if isinstance(s, list) else s
                for s in segments)
    return Script(out, cut=bool(open_), interleave=len(runs) > len(set(runs)))


def progress(stepper: Stepper, i: int) -> tuple[int, int, int, int]:
    """How far the correct handler has got at step ``i``, in what any format shares:
    calls announced (buffers opened), calls handed on, argument characters held, message
    characters shown."""
    snap = stepper.state(i).correct.snapshot
    return (len(snap.buffers), len(snap.finished), sum(len(b) for b in snap.buffers.values()),
            len(snap.message))


def matching_step(source: Stepper, i: int, other: Stepper) -> int:
    """The step of ``other`` (the same turn in another format) that matches step ``i`` of
    ``source``: the last at which ``other``'s correct handler has got no further than
    ``source``'s has (no more calls announced or handed on, argument or message characters
    held), so stepping one moves the other to where it has shown the same, and no more.
    Where the formats end calls at different moments (Chat at the turn's finish, the UI
    stream each on its own), the other waits at the last step it can show."""
    if not len(other):
        raise ValueError("no steps in the other stream")
    here = progress(source, i)
    at = 0
    for j in range(len(other)):
        if all(a <= b for a, b in zip(progress(other, j), here, strict=True)):
            at = j
        else:
            break
    return at


@dataclass
class Relay:
    """One turn as two streams: the provider's and the browser-side one an app's backend
    sends on from it (the AI SDK UI message stream by default), stepped side by side."""

    provider: Stepper
    browser: Stepper
    formats: tuple[str, str]
    """The provider's wire format and the browser side's."""

    def browser_step(self, i: int) -> int:
        """The browser stream's step matching the provider's step ``i``."""
        return matching_step(self.provider, i, self.browser)

    def provider_step(self, j: int) -> int:
        """The provider stream's step matching the browser's step ``j``."""
        return matching_step(self.browser, j, self.provider)


def relay(turn: Script | Sequence[Segment] | Source, provider: str | None = None,
          browser: str = BROWSER, *, faults: Mapping[str, type] | None = None) -> Relay:
    """A turn as the provider streams it and as the browser receives it from an app.

    ``turn`` is a turn script (or its segments), written in ``provider`` (by default
    ``anthropic-messages``) and in ``browser`` by the formats' own writers; or a capture
    (anything :class:`Stepper` takes), stepped as recorded, whose turn
    (:func:`script_of`) is written in ``browser``.
    """
    written = turn if isinstance(turn, Script) else Script(tuple(turn)) if isinstance(
        turn, (list, tuple)) and turn and all(isinstance(s, (Text, Call)) for s in turn) else None
    if written is not None:
        script, fmt = written, provider or "anthropic-messages"
        ahead = Stepper(turn_bytes(fmt, script), faults=faults)
    else:
        ahead = Stepper(turn, faults=faults)
        script = script_of(ahead)
        fmt = str(ahead.events["provider"].iloc[0]) if len(ahead) else (provider or "")
    behind = Stepper(turn_bytes(browser, script), faults=faults,
                     name=f"{ahead.turn}, sent on as {browser}")
    return Relay(ahead, behind, (fmt, browser))
