"""What a notebook's predict and exercise cells are built on: an answer checked, a verdict that
says right or wrong and why, and a worked solution kept apart until it is asked for.

The convention the notebooks follow (``tests/test_course.py`` checks it for every notebook):

* the first cell holds a ``## Goals`` section (what the student will be able to do), and the
  last cell a ``## Recap``;
* a cell tagged ``predict`` (cell metadata ``tags``, as Jupyter Book and nbgrader read them) has
  the student commit an answer to a variable or a widget *before* the computed reveal;
* a cell tagged ``exercise`` calls ``check(<exercise name>, answer)``; its worked solution lives in
  the :class:`Exercise` (``solution``), shown only by ``solution(<name>)``, never above the task.

Every :class:`Exercise` is registered in :data:`EXERCISES` by the module that defines it, with a
worked solution its checker must accept and wrong answers it must reject, each for the reason
given, so a checker that cannot fail is caught by the tests, not by a student.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXERCISES", "Exercise", "Prediction", "Verdict", "check", "exercise", "reveal",
           "solution"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A checker's answer: right or wrong, and why, in plain text (never HTML: the answer may
    hold a captured stream's bytes)."""

    right: bool
    why: str

    def __bool__(self) -> bool:
        return self.right

    def __str__(self) -> str:
        return f"{'Right' if self.right else 'Not yet'}: {self.why}"

    def __repr__(self) -> str:  # what a notebook cell shows
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


@dataclass(frozen=True, slots=True)
class Exercise:
    """One exercise: its ``name`` (``"01-anatomy/first-call"``: notebook, then topic), the
    ``task`` in a sentence, a ``checker`` from the student's answer to a :class:`Verdict`, the
    worked ``solution`` (a function returning the right answer, so the solution is code the
    tests run, and its ``explanation``), ``wrong``: answers a checker must reject, and
    ``unanswered``: what to set, said before any checking while the answer is None."""

    name: str
    task: str
    checker: Callable[[Any], Verdict]
    solution: Callable[[], Any]
    explanation: str
    wrong: Sequence[Any] = field(default_factory=tuple)
    unanswered: str | None = None
    """What to set, said while the answer is still None (None: the checker reads None)."""

    def check(self, answer: Any) -> Verdict:
        if answer is None and self.unanswered is not None:
            return Verdict(False, f"no answer yet: {self.unanswered}")
        try:
            return self.checker(answer)
        except Exception as e:  # a student's answer of the wrong shape is a wrong answer
            return Verdict(False, f"the answer could not be checked ({type(e).__name__}: {e})")


EXERCISES: dict[str, Exercise] = {}
"""Every exercise of the course, by name; filled as the modules defining them are imported."""


def exercise(ex: Exercise) -> Exercise:
    """Register ``ex`` (a name used twice is a mistake, not a replacement)."""
    if ex.name in EXERCISES:
        raise ValueError(f"exercise {ex.name!r} is registered twice")
    EXERCISES[ex.name] = ex
    return ex


def _find(name: str) -> Exercise:
    from . import load_all

    load_all()
    try:
        return EXERCISES[name]
    except KeyError:
        known = ", ".join(sorted(EXERCISES)) or "none"
        raise KeyError(f"no exercise named {name!r} (known: {known})") from None


def check(name: str, answer: Any) -> Verdict:
    """The verdict on ``answer`` to exercise ``name``."""
    return _find(name).check(answer)


@dataclass(frozen=True, slots=True)
class Worked:
    """A worked solution as a notebook shows it: the answer and how to get there."""

    answer: Any
    explanation: str

    def __repr__(self) -> str:
        return f"Answer: {self.answer!r}\n\n{self.explanation}"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


def solution(name: str) -> Worked:
    """The worked solution of exercise ``name``, on request."""
    ex = _find(name)
    return Worked(ex.solution(), ex.explanation)


@dataclass(frozen=True, slots=True)
class Prediction:
    """A prediction revealed: what the student committed to, what the data says, and whether
    they agree."""

    question: str
    predicted: Any
    actual: Any
    agree: bool
    why: str

    def answer(self) -> str:
        """What the data says and why, said whether or not a prediction was made."""
        return f"The data: {self.actual!r}. {self.why}"

    def __repr__(self) -> str:
        # no prediction: the answer stays hidden (Run All must not give it away)
        if self.predicted is None:
            return (f"{self.question}\nNo prediction yet: set it above and run this cell "
                    "again, or press show to see the answer.")
        head = f"You predicted {self.predicted!r}; {'right' if self.agree else 'not quite'}."
        return f"{self.question}\n{head}\n{self.answer()}"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """With no prediction, a **show** button (:meth:`widget`)."""
        if self.predicted is not None:
            return {"text/plain": repr(self)}
        bundle = dict(self.widget()._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle

    def widget(self) -> Any:
        """The question and a **show** button: the answer reaches the page (and the saved
        notebook's widget state) only once it is pressed."""
        import ipywidgets as w  # here: the checkers run without a front end

        asked = w.HTML()
        asked.value = _inert(repr(self))
        shown = w.HTML()
        button = w.Button(description="show", tooltip="show the answer without predicting")
        button.add_class("scl-show-answer")
        shown.add_class("scl-answer")

        def show(_: Any) -> None:
            shown.value = _inert(self.answer())
            button.disabled = True

        button.on_click(show)
        return w.VBox([asked, button, shown])


def _inert(text: str) -> str:
    from ..display import escape

    return f'<pre style="white-space:pre-wrap;margin:0">{escape(text)}</pre>'


def reveal(question: str, predicted: Any, actual: Any, why: str,
           agree: Callable[[Any, Any], bool] | None = None) -> Prediction:
    """The reveal of a predict cell: ``actual`` is computed by the caller from the data, never
    typed in, so the reveal holds on any data the notebook runs on. ``agree`` compares
    (default: equality)."""
    same = agree or (lambda p, a: p == a)
    ok = predicted is not None and bool(same(predicted, actual))
    return Prediction(question, predicted, actual, ok, why)
