"""Notebook 06's exercise: count, from ``load()``'s events, the calls whose stop never came.

The student's answer is a function of a ``load()`` table, so the checker can run it on turns
whose answer it knows: generated in each format whole, cut off inside a call, and with a call
that finished but whose arguments do not parse (finished, so not counted: "does it parse?" is
another question from "did it stop?"). The count each is checked against is computed by
``calls()``, never typed in.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pandas as pd

from .._calls import calls
from ..generate import GENERATED_FORMATS, ToolCall, generate
from ..loader import load
from ..wording import count
from .checking import Exercise, Verdict, exercise

__all__ = ["unfinished"]

_CALL = ToolCall("create_ticket", '{"subject": "Cracked lid", "note": "the box looked fine, '
                                  'the lid was in two pieces"}')


def unfinished(deltas: pd.DataFrame) -> int:
    """How many calls in ``deltas`` never got their stop (the worked solution)."""
    return int((~calls(deltas)["complete"].astype(bool)).sum())


@cache
def _samples() -> tuple[tuple[str, pd.DataFrame, int], ...]:
    out = []
    for fmt in GENERATED_FORMATS:
        whole = generate([_CALL, ("lookup_order", {"id": "A-4417"})], provider=fmt, seed=3)
        cut = generate([("lookup_order", {"id": "A-4417"}), _CALL], provider=fmt, seed=4,
                       truncate=0.5)
        bad = generate([("lookup_order", {"id": "A-4417"})], provider=fmt, seed=5,
                       quirks=["invalid_arguments"])
        for label, turn in ((f"{fmt}, two finished calls", whole),
                            (f"{fmt}, cut off inside its second call", cut),
                            (f"{fmt}, a finished call whose arguments do not parse", bad)):
            deltas = load(turn.body, name=label, strict=False)
            out.append((label, deltas, int((~calls(deltas)["complete"].astype(bool)).sum())))
    return tuple(out)


def _check_unfinished(answer: Any) -> Verdict:
    if not callable(answer):
        return Verdict(False, "pass your function itself (unfinished), not a number: it is "
                              "run on turns whose answer the kit knows")
    samples = _samples()
    for label, deltas, want in samples:
        got = answer(deltas.copy())
        if got != want:
            hint = (" A call that finished with arguments that do not parse still got its "
                    "stop: is your count about parsing rather than stopping?"
                    if "do not parse" in label else "")
            return Verdict(False, f"on a turn of {label}, your function says {got!r}; "
                                  f"{count(want, 'call')} there never got a stop.{hint}")
    return Verdict(True, f"your function agrees on all {len(samples)} turns (whole, cut off, "
                         "and finished with unparseable arguments, in every generated "
                         "format).")


exercise(Exercise(
    name="06-explore/unfinished",
    task="Write unfinished(deltas): how many calls in a load() table never got their stop.",
    checker=_check_unfinished,
    unanswered="define unfinished(deltas) and pass the function",
    solution=lambda: unfinished,
    explanation=(
        "calls() assembles each call with the correct accumulator and sets complete when the "
        "call's own stop (or done) event arrived; the unfinished calls are the others:\n\n"
        "    def unfinished(deltas):\n"
        "        return int((~scl.calls(deltas)['complete'].astype(bool)).sum())\n\n"
        "Counting calls whose arguments do not parse is a different question: a finished "
        "call can carry arguments that do not parse (invalid_arguments), and it did stop."),
    wrong=(lambda d: len(calls(d)),
           lambda d: int((~calls(d)["valid_json"].astype(bool)).sum()),
           lambda d: int((d["kind"] == "error").sum())),
))
