"""Learning from quirks: a seeded example of each, and which client faults each exposes.

:func:`examples` writes every quirk into a generated turn (a fixed seed, the first format
that can carry it, Chat first) and says where it is found, for the course to show one of each
rendered inert. :func:`exposes` measures, rather than claims, which faults a quirk exposes: a
turn (prose, two calls with an escape and non-ASCII) is written once cleanly and once with a
quirk, both are fed, in small socket reads, to the correct accumulator and every fault variant
(:func:`~streamcalls_lab.breaker.compare`), and a fault counts as exposed when it goes wrong on
the quirky turn but not on the clean one. Each quirk's ``worsens`` declares what this measures;
``tests/producers/test_exposure.py`` holds the two to each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from .. import turns
from ..breaker import compare, split_reads
from ..faults import FAULTS
from ..loader import load
from ..providers import FORMATS
from ..turns import Call, Script, Segment, Text
from .quirks import QUIRKS
from .scan import anomalies

TURN: tuple[Segment, ...] = (
    Text(("Let me ", "check that for you.")),
    Call("get_weather", "call_1", ('{"city": "Zü', 'rich", "note": "say ', '\\"hi\\""}')),
    Call("get_weather", "call_2", ('{"city": ', '"Rome"}')),
)
"""The turn the quirks are written into: two calls to one tool, prose before them."""
READ = 64
"""Bytes per socket read: small enough that reads end inside characters and frames."""


def _broken(fmt: str, turn: Script, faults: Mapping[str, type]) -> set[str]:
    reads = split_reads(turns.turn_bytes(fmt, turn), READ)
    _, outcomes = compare(reads, faults)
    return {name for name, out in outcomes.items() if out.broken}


def exposes(fmt: str = "openai-chat", quirks: Sequence[str] | None = None,
            faults: Mapping[str, type] | None = None) -> pd.DataFrame:
    """One row per quirk ``fmt`` can carry, one bool column per fault: True where the fault
    goes wrong on the quirky turn and not on the clean one."""
    faults = dict(FAULTS if faults is None else faults)
    names = [q for q in (quirks or FORMATS[fmt].quirks) if not QUIRKS[q].destroys]
    clean = _broken(fmt, Script(TURN), faults)
    rows = {q: {f: f in _broken(fmt, Script(TURN, quirks=frozenset({q})), faults) - clean
                for f in faults} for q in names}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(faults)).astype(bool)
    table.index.name = "quirk"
    return table


@dataclass(frozen=True)
class Example:
    """One quirk written into a generated turn, and where it is found."""

    quirk: str
    format: str
    body: bytes
    offset: int
    """The byte offset of the evidence (the frame that shows it)."""
    detail: str


PREFERRED = ("openai-chat", "openai-responses", "anthropic-messages")
"""The formats an example is written in first (the course's three), the rest after."""


def examples(seed: int = 8) -> list[Example]:
    """A seeded example of every quirk, in the first format (:data:`PREFERRED` first) that
    can carry it: the same bytes for the same seed."""
    from ..generate import generate

    order = [*PREFERRED, *(f for f in FORMATS if f not in PREFERRED)]
    out = []
    for name in QUIRKS:
        fmt = next(f for f in order if name in FORMATS[f].quirks and FORMATS[f].write)
        turn = generate([("get_weather", {"city": "Zürich", "unit": "celsius"}),
                         ("get_time", {"tz": "Europe/Rome"})], provider=fmt,
                        before="Let me check both for you.", seed=seed, quirks=[name])
        # leniently: identity_changed is a strict error by design
        found = anomalies(load(turn.body, name=name, strict=False))
        first = found[found["anomaly"] == name].iloc[0]
        out.append(Example(name, fmt, turn.body, int(first["offset"]), str(first["detail"])))
    return out
