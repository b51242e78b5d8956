"""How every benchmark here times a step: the best of some rounds, garbage collected before
each (a collection left over from the round before is not the step's cost)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def best(fn: Callable[[], object], rounds: int,
         clock: Callable[[], float] = time.process_time) -> float:
    """The least time ``fn()`` took over ``rounds`` calls, by ``clock`` (CPU time by default:
    the machine may be shared)."""
    times = []
    for _ in range(rounds):
        gc.collect()
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)
