"""What a stepper view needs beyond one step: the recorded clock and the history so far.

A play button should move at the pace the turn was recorded at, without a thread: the
view's clock (``ipywidgets.Play``) counts milliseconds, and :func:`step_at` says which
step that moment has reached. :func:`history` says, for every fault variant, when it
first went wrong and whether it is still wrong now (a variant that handed a call on early
can agree again once the stop arrives). :func:`play_range`, :func:`step_of` and
:func:`ms_of` map between that clock and the steps, so a view only links two widgets.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any

import pandas as pd

from .loader import load
from .stepper import Stepper, first_divergence

FALLBACK_GAP = 0.1
"""Seconds between steps when a turn has no recorded timing."""
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
    """Where a play clock stands when the reader moves to ``step``."""
    return int(clock.times[step] * 1000) if clock.times else 0


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
