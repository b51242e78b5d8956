"""Notebook 07's exercise: choose the case family that catches a given client bug.

The checker does not compare names: it serves the family the student names to the reference
client with that bug (``clients/reference.py --bug decode_chunks``) and says what the harness
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
TARGET_BUG = "decode_chunks"
"""The bug the exercise's client has: it decodes each socket read as UTF-8 on its own."""
_FORMAT = "openai-chat"


def _check_family(answer: Any) -> Verdict:
    if answer is None:
        return Verdict(False, "no answer yet: set family to one family name, as a string")
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
        return Verdict(True, f"{answer} caught {TARGET_BUG} ({n}): its reads end inside a "
                             "multi-byte character, so a client that decodes each read on "
                             "its own fails there.")
    other = sorted(set(report["class"]))
    also = f" (it caught {', '.join(other)} instead)" if other else ""
    return Verdict(False, f"the client passed {answer}'s {n}{also}: a read that decodes on "
                          "its own, ending between characters, never breaks it. Which "
                          "family cuts its reads inside a character?")


exercise(Exercise(
    name="07-torture/family",
    task=("A client decodes each socket read as UTF-8 on its own. Name the case family that "
          "catches it."),
    checker=_check_family,
    solution=lambda: "utf8_read_split",
    explanation=(
        "utf8_read_split serves each turn in reads cut inside every multi-byte character "
        "(é, —, 東, emoji), so a read ends with the first byte or two of a character. "
        "bytes.decode('utf-8') on that read raises (or, with errors='replace', writes U+FFFD "
        "into the arguments). A client must keep one incremental decoder for the whole "
        "stream (codecs.getincrementaldecoder('utf-8')), as clients/reference.py does. It is "
        "the family built for this bug; odd_chunks and one_byte_reads, whose reads also end "
        "inside characters, catch it too (the checker serves whichever you name, so it "
        "accepts them), while a family whose reads end between characters cannot show it."),
    wrong=("escapes", "interleaved", "no-such-family"),
))
