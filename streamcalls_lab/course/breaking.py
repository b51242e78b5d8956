"""Notebook 3's predictions and exercise: what happens to a fault when one setting changes.

Every question starts from a fault's preset in the breaker (the setup in which it bites)
and changes one thing; the answer (does the fault still bite?) is computed by running the
breaker's model, so it is what the playground would show, never typed in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .. import breaker
from .checking import Exercise, Verdict, exercise


@dataclass(frozen=True)
class WhatIf:
    """One change to a fault's preset, and the question it asks."""

    fault: str
    question: str
    change: dict[str, Any]

    def setup(self) -> breaker.Setup:
        preset = breaker.PRESETS[self.fault]
        changes = {k: (v(preset) if callable(v) else v) for k, v in self.change.items()}
        return replace(preset, **changes)

    def outcome(self) -> breaker.Outcome:
        return breaker.run(self.setup()).faults[self.fault]

    def bites(self) -> bool:
        """Does the fault still give a wrong result after the change?"""
        return self.outcome().broken


WHAT_IFS: dict[str, WhatIf] = {
    "trim_split_after_the_space": WhatIf(
        "trim", "trim: move the split one character right, just after the space",
        {"split": lambda s: s.split + 1}),
    "trim_split_inside_a_word": WhatIf(
        "trim", "trim: move the split two characters right, inside the word 'from'",
        {"split": lambda s: s.split + 2}),
    "trim_cut_every_5": WhatIf(
        "trim", "trim: split inside a word, but also cut every 5 characters",
        {"split": lambda s: s.split + 2, "every": 5}),
    "decode_each_split_one_right": WhatIf(
        "decode_each", "decode_each: move the split one right, past the escape's backslash",
        {"split": lambda s: s.split + 1}),
    "key_by_name_no_earlier_call": WhatIf(
        "key_by_name", "key_by_name: clear the earlier call", {"earlier": None}),
    "one_choice_earlier_sent_before": WhatIf(
        "one_choice", "one_choice: the earlier call sent before this one, in one choice",
        {"two_choices": False}),
    "key_by_last_earlier_sent_before": WhatIf(
        "key_by_last", "key_by_last: the earlier call sent before this one, not interleaved",
        {"interleave": False}),
    "decode_chunks_one_read": WhatIf(
        "decode_chunks", "decode_chunks: read size 0, the whole body in one read",
        {"read_size": None}),
}
"""Every "what if" notebook 3 asks, by the name a student's answer uses."""


def answers() -> dict[str, bool]:
    """Each question's answer: does the fault still bite after the change?"""
    return {name: w.bites() for name, w in WHAT_IFS.items()}


def _why(w: WhatIf) -> str:
    out = w.outcome()
    return out.reason if out.reason else "it hands on exactly what the correct handler does"


def _check(answer: Any) -> Verdict:
    if not isinstance(answer, dict):
        return Verdict(False, "answer with a dict: {question name: True if the fault still "
                              "bites, False if not}, one entry per breaking.WHAT_IFS name")
    missing = [n for n in WHAT_IFS if not isinstance(answer.get(n), bool)]
    if missing:  # said before any answer is judged, so a blank form reveals nothing
        return Verdict(False, f"answer True or False for {', '.join(missing)}")
    unknown = [n for n in answer if n not in WHAT_IFS]
    if unknown:
        return Verdict(False, f"no question named {', '.join(map(repr, unknown))}")
    wrong = []
    for name, w in WHAT_IFS.items():
        truth = w.bites()
        if answer[name] is not truth:
            said = "still bites" if truth else "no longer bites"
            wrong.append(f"{name}: it {said} ({_why(w)})")
    if wrong:
        return Verdict(False, f"{len(wrong)} of {len(WHAT_IFS)} not yet: " + "; ".join(wrong))
    return Verdict(True, f"all {len(WHAT_IFS)} right: a fault bites where its one changed "
                         "decision meets the stream that exposes it, and nowhere else.")


exercise(Exercise(
    name="03-breaking/what-if",
    task="For each question in breaking.WHAT_IFS (a fault's preset with one setting "
         "changed), answer True if the fault still gives a wrong result, False if not.",
    checker=_check,
    solution=answers,
    explanation=(
        "trim strips the whitespace at both ends of every fragment: a split just after the "
        "space leaves the space at the end of the first fragment, so it is still lost; only "
        "a split inside a word leaves no space at an edge, and then cutting every 5 "
        "characters puts spaces back at edges. decode_each one to the right no longer cuts "
        "the escape, so it raises no error, but it still decodes \\n into a real line break "
        "and the buffer is no longer the text that was sent. key_by_name needs two calls to "
        "one tool; one_choice needs two choices each numbering its calls from 0; "
        "key_by_last needs two calls whose fragments interleave; decode_chunks needs a read "
        "that ends inside a multi-byte character, which one read of the whole body never "
        "does. Each answer is breaking.WHAT_IFS[name].bites(), the breaker's own run."),
    wrong=({name: True for name in WHAT_IFS}, {name: False for name in WHAT_IFS}, {}),
))
