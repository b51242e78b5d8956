"""Notebook 09's exercise: name the verdict a trace earns for one call.

The checker does not keep an answer key: it judges the pair with the kit's own judge
(:func:`streamcalls_lab.tracing.judge_turn`) and compares, so the answer is right because
the judge reaches it, and a wrong one is told what the judge saw.
"""

from __future__ import annotations

from typing import Any

from ..tracing import VERDICTS, TracedCall, WireCall, judge_turn
from .checking import Exercise, Verdict, exercise

__all__ = ["EXERCISE_TRACED", "EXERCISE_WIRE"]

EXERCISE_WIRE = (WireCall("call_1", "get_weather", '{"city": "Paris"}'),
                 WireCall("call_2", "get_weather", '{"city": "Rome"}'))
"""Two calls the wire sent in one turn."""
EXERCISE_TRACED = (TracedCall("call_1", "get_weather",
                              '{"city": "Paris"}{"city": "Rome"}'),)
"""What a tracer that keeps one argument buffer per turn recorded for it."""


def _answer() -> str:
    return judge_turn(EXERCISE_WIRE, EXERCISE_TRACED)[0].verdict


def _check_verdict(answer: Any) -> Verdict:
    if not isinstance(answer, str) or answer not in VERDICTS:
        return Verdict(False, f"{answer!r} is not a verdict; the verdicts are: "
                              f"{', '.join(VERDICTS)}")
    right = _answer()
    if answer == right:
        return Verdict(True, f"{right}: {VERDICTS[right].meaning}. The fix: "
                             f"{VERDICTS[right].fix}.")
    return Verdict(False, f"not {answer} ({VERDICTS[answer].meaning}): look at where the "
                          "second call's text went")


exercise(Exercise(
    name="09-tracing/verdict",
    task=("The wire sent get_weather twice, {\"city\": \"Paris\"} then {\"city\": \"Rome\"}; "
          "the trace holds one call whose arguments are both texts joined. Which verdict "
          "does the first wire call get?"),
    checker=_check_verdict,
    unanswered="set verdict to one verdict name, as a string",
    solution=_answer,
    explanation=(
        "merged: the traced arguments hold this call's text joined with the other call's. A "
        "tracer does this when it keeps one argument buffer per turn instead of one per "
        "call index; the reader of the trace sees one call with arguments that are not "
        "JSON, and the second call, which the application did run, is missing."),
    wrong=("mangled", "missing", "no-such-verdict"),
))
