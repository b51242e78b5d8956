"""Notebook 07's exercise: choose the case family that catches a given client bug.

The checker does not compare names: it serves the family the student names to the reference
client with that bug (``clients/reference.py --bug splitlines``) and says what the harness
found, so a family is right because it catches the bug, and wrong with the reason it did not.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..torture import cases, check_client
from ..wording import count
from .checking import Exercise, Verdict, exercise

__all__ = ["CLIENTS", "TARGET_BUG"]

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
"""The repository's client adapters (absent from an installed wheel)."""
TARGET_BUG = "splitlines"
"""The bug the exercise's client has: it cuts the stream into lines with ``str.splitlines()``."""
_FORMAT = "openai-chat"


def _check_family(answer: Any) -> Verdict:
    if not isinstance(answer, str):
        return Verdict(False, "name one family, as a string (a family column value, such as "
                              "'escapes')")
    known = sorted({c.family for c in cases([_FORMAT], "full")})
    if answer not in known:
        return Verdict(False, f"{answer!r} is not a family of the {_FORMAT} cases; the "
                              f"families are: {', '.join(known)}")
    client = CLIENTS / "reference.py"
    if not client.is_file():
        return Verdict(False, f"the reference client is not at {client}: run this from the "
                              "repository")
    report = check_client([sys.executable, str(client), "--bug", TARGET_BUG], [_FORMAT],
                          suite="full", families=[answer], loop=True, progress=False)
    n = count(report.attrs["cases"], "case")
    if TARGET_BUG in set(report["class"]):
        return Verdict(True, f"the {answer} family caught {TARGET_BUG} ({n}): a data value "
                             "holds a character that str.splitlines() takes for a line end "
                             "and SSE does not, so the client cut a frame in two.")
    other = sorted(set(report["class"]))
    also = f" (it caught {', '.join(other)} instead)" if other else ""
    return Verdict(False, f"the client passed the {answer} family's {n}{also}: nothing there "
                          "is a line end to str.splitlines() that is not one to SSE. Which "
                          "family puts such a character inside a data value?")


exercise(Exercise(
    name="07-torture/family",
    task=("A client cuts the stream into lines with str.splitlines(). Name the case family "
          "that catches it."),
    checker=_check_family,
    unanswered="set family to one family name, as a string",
    solution=lambda: "line_separator_in_data",
    explanation=(
        "line_separator_in_data serves a frame whose JSON data holds U+2028 LINE SEPARATOR "
        "unescaped (JSON allows it, and a server that writes JSON without ASCII escaping sends "
        "it). An event stream ends lines only at CR, LF or CR LF, but str.splitlines() also "
        "ends them at U+2028, U+2029, U+0085, form feed and more, so the client cuts the "
        "frame's data in the middle of its JSON. Split on CR, LF and CR LF only, as "
        "clients/reference.py's parser does (bytes.splitlines() also splits only there). "
        "No other family holds such a character, so none catches it."),
    wrong=("crlf", "escapes", "no-such-family"),
))
