"""Notebook 05's exercise: a handler of your own, checked by the kit's suite.

The student edits a first attempt until ``check_handler`` finds nothing; the checker says
which kinds of failure are left and, for each, the suite's own advice. The worked solution is
the first attempt with each of its bad decisions changed, and the wrong answers are that
solution with one of them put back, so each must be named by the class it belongs to.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..check import check_handler
from ..wording import count
from .checking import Exercise, Verdict, exercise

__all__ = ["Handler"]


class Handler:
    """One buffer per call, keyed by (choice, block); a call is handed on at its own stop."""

    def __init__(self) -> None:
        self.open: dict[tuple[Any, Any], dict[str, Any]] = {}  # (choice, block) -> the call
        self.done: list[dict[str, Any]] = []  # calls handed on, in the order they finished

    def feed(self, event: dict[str, Any]) -> None:
        kind, block = event["kind"], event["block"]
        key = (event.get("choice"), block)  # each of Chat's n choices numbers calls from 0
        if kind == "call_start":
            self.finish_call(key)  # a new call under an open call's index: that one is over
            self.open[key] = {"block": block, "call_id": event["call_id"],
                              "tool": event["tool"], "args": "", "deltas": 0}
        elif kind == "args_delta" and key in self.open:
            self.identify(key, event)
            self.open[key]["args"] += self.fragment(event)  # exactly as sent
            self.open[key]["deltas"] += 1
        elif kind == "args_done" and key in self.open:
            if not self.open[key]["deltas"] and event.get("final") is not None:
                self.open[key]["args"] = event["final"]  # sent only in the done event
            self.finish_call(key)
        elif kind == "block_stop":  # block None: the choice's message is over
            ends = [k for k in self.open if k[0] == key[0]] if block is None else [key]
            for k in ends:
                self.finish_call(k)
        # the end of the stream is not a stop: a call still open there is never handed on

    def fragment(self, event: dict[str, Any]) -> str:
        return event["fragment"]

    def identify(self, key: tuple[Any, Any], event: dict[str, Any]) -> None:
        """An id or name sent after the announcement fills what it left empty; a second,
        different one never replaces the first."""
        for field in ("call_id", "tool"):
            have, sent = self.open[key][field], event.get(field)
            if not (isinstance(have, str) and have) and isinstance(sent, str) and sent:
                self.open[key][field] = sent

    def finish_call(self, key: tuple[Any, Any]) -> None:
        call = self.open.pop(key, None)
        if call is not None:
            del call["deltas"]
            self.done.append(call)

    def finish(self) -> list[dict[str, Any]]:
        return self.done


class _Trims(Handler):
    """The solution with the first attempt's tidying put back."""

    def fragment(self, event: dict[str, Any]) -> str:
        return event["fragment"].strip()


class _OneChoice(Handler):
    """The solution keyed by block alone, as if a response had one choice."""

    def feed(self, event: dict[str, Any]) -> None:
        super().feed({**event, "choice": None})


class _DeltasOnly(Handler):
    """The solution that ignores the arguments a done event carries."""

    def feed(self, event: dict[str, Any]) -> None:
        super().feed({**event, "final": None} if event["kind"] == "args_done" else event)


def _check_handler(answer: Any) -> Verdict:
    if not (isinstance(answer, type) or callable(answer)):
        return Verdict(False, "pass the handler class itself (MyHandler), not an instance "
                              "or its result")
    report = check_handler(answer)
    cases = count(report.attrs["cases"], "case")
    if not len(report):
        return Verdict(True, f"no failure in {cases}: every call is handed on whole, once, "
                             "at its own stop, and nothing a correct handler holds back.")
    left = "".join(f"\n- {row['class']} ({count(row['failures'], 'failure')}): {row['summary']}"
                   for _, row in report.iterrows())
    return Verdict(False, f"{count(len(report), 'kind')} of failure in {cases}:{left}")


exercise(Exercise(
    name="05-fixtures/handler",
    task="Edit MyHandler until the kit's suite finds no failure in it.",
    checker=_check_handler,
    unanswered="pass your handler class itself (MyHandler)",
    solution=lambda: Handler,
    explanation=(
        "Each change answers one row of the report: append every fragment exactly as sent "
        "(a space at a join is usually inside a string value); hand a call on at its own stop "
        "(block_stop, args_done, or a new call under the same index), never because its "
        "arguments parse or the stream ended; key calls by (choice, block), since each of a "
        "Chat response's n choices numbers its calls from 0; and where no argument delta "
        "came, take the done event's string; an id or name first sent after the announcement "
        "is the call's, but never replaces one it already has.\n\n" + inspect.getsource(Handler)),
    wrong=(_Trims, _OneChoice, _DeltasOnly),
))
