"""Which client faults each producer quirk exposes, measured rather than claimed.

A turn (prose, two calls with an escape and non-ASCII) is written once cleanly and once with a
quirk, both are fed, in small socket reads, to the correct accumulator and every fault variant
(:func:`~streamcalls_lab.breaker.compare`), and a fault counts as exposed when it goes wrong on
the quirky turn but not on the clean one. Each quirk's ``worsens`` declares what this measures;
``tests/producers/test_exposure.py`` holds the two to each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .. import turns
from ..breaker import compare, split_reads
from ..faults import FAULTS
from ..providers import FORMATS
from ..turns import Call, Script, Segment, Text
from .quirks import QUIRKS

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
