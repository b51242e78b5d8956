"""Notebook 2's exercises: measure where a provider cuts, and read a fit.

``02-fragments/on-token`` has the student count how many of a call's fragment boundaries
fall on an o200k token boundary, checked against
:func:`streamcalls_lab.token_boundaries.on_token` on fragment lists chosen to catch each
usual slip. ``02-fragments/wire-or-chars`` answers the notebook's "Try it" on the bundled
data: does counting length as it travels make the fit any straighter?
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import corpus, stats
from .._calls import calls
from ..generate import token_pieces
from ..loader import load
from ..token_boundaries import on_token
from .checking import Exercise, Verdict, exercise

# Each case: fragments, and what a wrong count there usually means.
_CASES: tuple[tuple[tuple[str, ...], str], ...] = (
    (('{"', "city", '":', ' "', "Paris", '"}'), "every cut on a token"),
    (('{"ci', 'ty": "Par', 'is"}'), "cuts inside tokens count as off a boundary"),
    (("", '{"city":', ' "Paris"}'), "an empty fragment (Anthropic opens with one) is no cut"),
    (('{"city": "Paris"}',), "one fragment has no interior boundary: (0, 0)"),
    (('{"note": "caf', 'é 👍"}'), "offsets count characters of the joined text"),
    (('{"a": 1', "}"), "the end of the last fragment is not a boundary"),
)
TRY_THRESHOLD = 0.01
"""How far r² must move for counting length as ``wire_chars`` to count as a change."""


def _check_on_token(answer: Any) -> Verdict:
    if not callable(answer):
        return Verdict(False, "give the function itself: check(name, on_token), not a count")
    for parts, hint in _CASES:
        want = on_token(parts)
        try:
            got = answer(list(parts))
        except Exception as e:  # the student's function failing is a wrong answer
            return Verdict(False, f"on {list(parts)!r} your function raised "
                                  f"{type(e).__name__}: {e}")
        if not isinstance(got, tuple | list) or tuple(got) != want:
            return Verdict(False, f"on {list(parts)!r} the answer is {want} (on a token "
                                  f"boundary, interior boundaries), yours {got!r}: {hint}.")
    return Verdict(True, f"all {len(_CASES)} fragment lists counted as the kit counts them.")


def _on_token(parts: Sequence[str]) -> tuple[int, int]:
    pieces = [p for p in parts if p]
    text = "".join(pieces)
    tokens, at = set(), 0
    for piece in token_pieces(text):
        at += len(piece)
        tokens.add(at)
    cuts, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        cuts.append(at)
    return sum(c in tokens for c in cuts), len(cuts)


def _counting_the_end(parts: Sequence[str]) -> tuple[int, int]:
    on, cuts = _on_token(parts)
    return on + 1, cuts + 1


def _counting_empty_fragments(parts: Sequence[str]) -> tuple[int, int]:
    on, cuts = _on_token(parts)
    return on, cuts + sum(1 for p in parts[:-1] if not p)


def _on_spaces(parts: Sequence[str]) -> tuple[int, int]:
    pieces = [p for p in parts if p]
    return sum(p.endswith(" ") or p.endswith('"') for p in pieces[:-1]), len(pieces) - 1


exercise(Exercise(
    name="02-fragments/on-token",
    task="Write on_token(parts): for one call's fragments, return (how many of its interior "
         "boundaries fall on an o200k token boundary of the joined text, how many interior "
         "boundaries there are). generate.token_pieces(text) cuts text into o200k tokens.",
    checker=_check_on_token,
    solution=lambda: _on_token,
    explanation=(
        "Drop empty fragments (a boundary needs text on both sides). Join the rest; the "
        "token boundaries are the running lengths of token_pieces(joined); the fragment "
        "boundaries are the running lengths of every fragment but the last (the end of "
        "the text is no cut). Count the fragment boundaries that are token boundaries.\n\n"
        "    def on_token(parts):\n"
        "        pieces = [p for p in parts if p]\n"
        "        tokens = set(itertools.accumulate(len(t) for t in\n"
        "                     generate.token_pieces(''.join(pieces))))\n"
        "        cuts = list(itertools.accumulate(len(p) for p in pieces[:-1]))\n"
        "        return sum(c in tokens for c in cuts), len(cuts)\n\n"
        "The library's version is streamcalls_lab.token_boundaries.on_token; "
        "token_alignment applies it to every finished call of a load() table."),
    wrong=(_counting_the_end, _counting_empty_fragments, _on_spaces, (3, 3)),
))


def wire_changes_the_fit(source: Any = None) -> bool:
    """On ``source`` (default: the bundled data), whether counting length as ``wire_chars``
    moves any fitted format's r² by more than :data:`TRY_THRESHOLD`."""
    folder = corpus.BUNDLED if source is None else source
    table = calls(load(folder, strict=False))
    chars = stats.delta_fit(table, min_calls=stats.MIN_FIT_CALLS)
    wire = stats.delta_fit(table, "wire_chars", min_calls=stats.MIN_FIT_CALLS)
    moved = (wire["r2"] - chars["r2"]).abs()[chars["fitted"]]
    return bool((moved > TRY_THRESHOLD).any())


class _Opposite(Sequence[Any]):
    """The wrong answers of a yes/no question on the bundled data: the opposite of the
    truth, and a word for a bool, computed when asked (not at import)."""

    def __init__(self, truth: Callable[[], bool]) -> None:
        self._truth = truth

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:  # type: ignore[override]
        return [not self._truth(), "yes"][i]


def _check_wire(answer: Any) -> Verdict:
    if not isinstance(answer, bool):
        return Verdict(False, "answer True (some r² moves by more than 0.01) or False")
    truth = wire_changes_the_fit()
    if answer == truth:
        return Verdict(True, "on the bundled data " + (
            "some format's fit changes when length is counted as it travels."
            if truth else "no format's r² moves by more than 0.01: escapes are a small, "
            "steady share of these arguments, so the two lengths are nearly proportional "
            "and the line is as straight either way (in wire_chars each delta holds more "
            "characters, as the escaped text is longer)."))
    return Verdict(False, "compare the r2 column of stats.delta_fit(table) with that of "
                          "stats.delta_fit(table, 'wire_chars') on the bundled data.")


exercise(Exercise(
    name="02-fragments/wire-or-chars",
    task="On the bundled data, does counting length as it travels (stats.delta_fit(table, "
         "'wire_chars')) move any streamed format's r² by more than 0.01? True or False.",
    checker=_check_wire,
    solution=wire_changes_the_fit,
    explanation=(
        "Fit twice and compare: fit = stats.delta_fit(table, min_calls=5); wire = "
        "stats.delta_fit(table, 'wire_chars', min_calls=5); (wire.r2 - fit.r2).abs(). The "
        "model's tokens, and so the cuts, are pieces of the argument string (chars); each "
        "piece is then escaped for its frame, which lengthens it by one character per quote "
        "or backslash. Where those are few and spread evenly the two lengths are nearly "
        "proportional and the line is as straight either way; only its slope changes. On "
        "your own captures, arguments full of quotes or line breaks (code, Markdown, JSON "
        "inside a string) are where the two fits can part."),
    wrong=_Opposite(wire_changes_the_fit),
))
