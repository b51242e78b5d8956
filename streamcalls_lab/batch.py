"""One step over many files behind a progress bar, each file's failure raised or collected.

Importing recordings and redacting captures both run this way: a bad file stops the run
when the caller gave no list for failures, else it is noted there while the rest go on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
E = TypeVar("E", bound=Exception)


def over_files(
    step: Callable[[T], R],
    items: Iterable[T],
    *,
    desc: str,
    progress: bool | None,
    catch: type[E],
    failures: list[E] | None,
) -> list[R]:
    """``step`` of each item in order, with a progress bar (``progress`` None: only on a
    terminal). ``failures``: a list that collects each ``catch`` error while the rest go on;
    without one the first raises."""
    from tqdm.auto import tqdm  # only a batch pays for the bar's import

    done = []
    for item in tqdm(items, desc=desc, unit="file",
                     disable=None if progress is None else not progress):
        try:
            done.append(step(item))
        except catch as e:
            if failures is None:
                raise
            failures.append(e)
    return done
