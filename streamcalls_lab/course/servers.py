"""Notebook 08's exercises: read what a server sent, and say which client decision it breaks.

Every expected answer is computed from a turn the kit writes (``turns.turn_bytes``) or from
the measured table of faults each quirk exposes (``producers.examples.exposes``), so an answer
is checked against what the kit's readers and fault variants actually do.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from .. import turns
from .._calls import calls
from ..loader import load
from ..producers.examples import exposes
from ..wording import clauses
from .checking import Exercise, Verdict, exercise

__all__ = ["SEGMENTS", "STOP_CHOICES", "gap_turn"]

SEGMENTS = (turns.Call("get_weather", "c1", ('{"city": ', '"Paris"}')),
            turns.Call("get_time", "c2", ('{"tz": ', '"Europe/Rome"}')))
"""The two calls the exercises write into turns."""


def gap_turn() -> bytes:
    """A Cohere v2 chat turn of :data:`SEGMENTS` whose tool-call indices skip (``index_gap``)."""
    return turns.turn_bytes("cohere-chat", turns.Script(SEGMENTS, quirks=frozenset({"index_gap"})))


@cache
def _gap_indices() -> tuple[int, ...]:
    return tuple(int(b) for b in calls(load(gap_turn()))["block"])


def _as_ints(answer: Any) -> tuple[int, ...]:
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise TypeError("give the indices as a list of numbers, one per call, in order")
    return tuple(int(x) for x in answer)


def _check_gap(answer: Any) -> Verdict:
    got, want = _as_ints(answer), _gap_indices()
    if got == want:
        return Verdict(True, f"the calls carry indices {list(want)}: the server skipped, and "
                             "the kit keeps each call at the index it was sent under, so a "
                             "client that takes the index for a position in a list fails.")
    if got == tuple(range(len(want))):
        return Verdict(False, f"{list(got)} is what a format that counts calls from 0 would "
                              "send; this server skips. Read the block column of "
                              "scl.calls(cohere).")
    return Verdict(False, f"{list(got)} is not what the turn carries; scl.calls(cohere) "
                          "shows one row per call, with its index in block.")


def _faults(answer: Any) -> frozenset[str]:
    if isinstance(answer, str):
        return frozenset({answer})
    return frozenset(str(x) for x in answer)


@cache
def _interleaved_wrong() -> frozenset[str]:
    row = exposes("openai-responses", ["interleaved_calls"]).loc["interleaved_calls"]
    return frozenset(name for name, bad in row.items() if bad)


def _check_interleaved(answer: Any) -> Verdict:
    got, want = _faults(answer), _interleaved_wrong()
    if got == want:
        return Verdict(True, f"{', '.join(sorted(want))}: only when fragments of two calls "
                             "alternate does the call announced last differ from the call a "
                             "fragment belongs to.")
    missing, extra = sorted(want - got), sorted(got - want)
    said = clauses((missing, f"you left out {', '.join(missing)}"),
                   (extra, f"{', '.join(extra)} is not among them: it goes wrong on the clean "
                           "turn too, or not at all (or is no fault name: see scl.FAULTS)"))
    return Verdict(False, said + ". Measure it: exposes('openai-responses', "
                                 "['interleaved_calls']).")


STOP_CHOICES = {
    "a": "the stop reason: tool_calls (Chat) or tool_use (Anthropic)",
    "b": "the calls themselves: every call that got its own stop event was made",
    "c": "the last event of the stream: [DONE] or message_stop",
}
"""The choices of the stop-reason question (answer with one letter)."""


def _check_stop(answer: Any) -> Verdict:
    letter = str(answer).strip().lower()[:1]
    if letter == "b":
        return Verdict(True, "a call is finished by its own stop event (in Chat, by any "
                             "finish_reason); finished calls say the model asked for tools. "
                             "The stop reason only tells a cut-off turn (length, max_tokens) "
                             "from a finished one.")
    if letter == "a":
        return Verdict(False, "that is the decision this server breaks: it says 'stop' after "
                              "making calls, and a client that waits for tool_calls drops "
                              "every one of them (stop_reason_mismatch).")
    if letter == "c":
        return Verdict(False, "the end of the stream says the turn is over, not whether calls "
                              "were made, and a cut-off stream may have no last event at all.")
    return Verdict(False, f"answer with one letter of {', '.join(STOP_CHOICES)}")


exercise(Exercise(
    name="08-servers/index-gap",
    task="Write a Cohere v2 turn with index_gap and find it: which index does each call carry?",
    checker=_check_gap,
    unanswered="set indices to a list of numbers, one per call",
    solution=lambda: list(_gap_indices()),
    explanation=(
        "cohere = gap_turn() (turns.turn_bytes('cohere-chat', turns.Script(SEGMENTS, "
        "quirks=frozenset({'index_gap'})))); scl.anomalies(scl.load(cohere)) finds index_gap "
        "with the byte of its evidence, and scl.calls(cohere)['block'] lists each call's "
        "index as sent. The kit keys calls by that index and never renumbers them."),
    wrong=([0, 1], [1, 2], "1, 3"),
))

exercise(Exercise(
    name="08-servers/interleaved",
    task=("Fragments of two calls alternate (interleaved_calls) in OpenAI Responses: which "
          "faults of notebook 3 go wrong only then?"),
    checker=_check_interleaved,
    unanswered="set goes_wrong to a list of fault names",
    solution=lambda: sorted(_interleaved_wrong()),
    explanation=(
        "exposes('openai-responses', ['interleaved_calls']) writes the turn clean and with "
        "the quirk, feeds both to every fault variant and marks the faults that go wrong only "
        "on the quirky one. key_by_last sends each fragment to the call announced last: "
        "while calls come one after another that is the right call, so only interleaving "
        "shows the bug."),
    wrong=(["key_by_id"], ["key_by_last", "trim"], []),
))

exercise(Exercise(
    name="08-servers/stop-reason",
    task=("Your server ends every turn with finish_reason 'stop', calls or not. What should "
          "decide that the model asked for tools? Answer a, b or c (STOP_CHOICES)."),
    checker=_check_stop,
    unanswered="set answer to one letter, a, b or c",
    solution=lambda: "b",
    explanation=(
        "b. A client that hands calls on only when the stop reason says tool_calls drops "
        "every call of such a turn. Calls are finished by their own stop events (in Chat, by "
        "any finish_reason); the presence of finished calls says the model asked for tools, "
        "and the stop reason is only good for telling a cut-off turn (length, max_tokens) "
        "from a finished one."),
    wrong=("a", "c", "d"),
))
