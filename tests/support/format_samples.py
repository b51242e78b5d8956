"""One turn every format can write: the registry contract's sample (tests/providers/
test_formats.py) and redaction's (tests/test_redact_formats.py) are the same turn."""

from __future__ import annotations

from typing import Any

from streamcalls_lab.providers import FORMATS
from streamcalls_lab.turns import Call, Script, Text

VALUES = ("Montréal", "Zqueb", "Amérique", "Toronto", "looking", "things")
"""Every value of the sample that redaction must not hand back (its ids are checked apart)."""


def call_id(name: str, n: int) -> str:
    """A call id shaped as the format's own (its prefix, then that many characters)."""
    prefix, size = FORMATS[name].call_ids
    return prefix + (f"Q{n}r7Xk2Lm9" * 8)[:size]


def sample(name: str, **options: Any) -> Script:
    """Prose, then two calls: an escaped quote inside a string, non-ASCII literal and split."""
    return Script((
        Text(("I am ", "looking into ", "things.")),
        Call("get_weather", call_id(name, 1), ('{"city": "Mont', 'réal \\"Zqueb\\"',
                                               '", "days": 3}')),
        Call("get_time", call_id(name, 2), ('{"tz": "Amé', 'rique/Toronto"}')),
    ), **options)
