"""Lengths of strings as they stood on the wire, escapes included."""

from __future__ import annotations

import json
import re
from functools import cache


@cache
def _pattern(key: str) -> re.Pattern[str]:
    # A JSON string token: anything but a quote or backslash, or an escape pair.
    return re.compile(r'"' + re.escape(key) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)


def wire_lengths(data: str, key: str) -> list[int]:
    """Escaped lengths of every string value of ``key`` in a raw JSON text, in order.

    A quote inside a JSON string is always escaped, so ``"key":`` with bare
    quotes can only be a real key, never text inside a value.
    """
    return [len(m.group(1)) for m in _pattern(key).finditer(data)]


def escaped_length(text: str) -> int:
    """The escaped length a minimal JSON encoder would give (used when the raw form is gone)."""
    return len(json.dumps(text, ensure_ascii=False)) - 2
