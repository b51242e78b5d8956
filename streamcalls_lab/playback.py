"""What a stepper view needs beyond one step: the recorded clock and the history so far.

A play button should move at the pace the turn was recorded at, without a thread: the
view's clock (``ipywidgets.Play``) counts milliseconds, and :func:`step_at` says which
step that moment has reached. :func:`history` says, for every fault variant, when it
first went wrong and whether it is still wrong now (a variant that handed a call on early
can agree again once the stop arrives).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any

import pandas as pd

from .deltas import load
from .stepper import Stepper

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


def history(stepper: Stepper, upto: int) -> pd.DataFrame:
    """Per variant: the first step (up to ``upto``) at which it diverged, why, and why now.

    ``first_step`` is NA and both reasons empty for a variant that has not gone wrong yet;
    ``now`` is empty when it agrees with the correct handler at ``upto``.
    """
    first: dict[str, tuple[int, str]] = {}
    for i in range(upto + 1):
        for name, reason in stepper.state(i).diverged.items():
            first.setdefault(name, (i, reason))
    now = stepper.state(upto).diverged
    rows = [{"variant": name, "first_step": first[name][0] if name in first else None,
             "first_reason": first.get(name, (None, ""))[1], "now": now.get(name, "")}
            for name in stepper.faults]
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS)).astype(
        {"variant": "str", "first_step": "Int64", "first_reason": "str", "now": "str"})
