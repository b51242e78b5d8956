"""Lengths of strings as they stood on the wire, escapes included."""

from __future__ import annotations

import re
from functools import cache
from json.encoder import encode_basestring as _quote  # the C escaper: '"' + minimal + '"'


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


def wire_length(data: str, key: str, fragment: object) -> int | None:
    """Length of ``fragment`` as it stood, escaped, in the raw ``data`` (the value of ``key``).

    With no backslash in ``data`` nothing was escaped: it is ``len(fragment)``. Otherwise,
    when the first ``"key":`` is followed by the fragment's minimal escaping (what nearly
    every server sends), that token is it, found without a scan. Anything else (``\\u00e9``,
    ``\\/``, other spacing) is measured by :func:`wire_lengths` (the first value of ``key``).
    """
    if type(fragment) is str:
        if "\\" not in data:
            return len(fragment)
        quoted = f'"{key}"'
        at = data.find(quoted)
        if at >= 0:
            at += len(quoted)
            if data.startswith(":", at):
                token = _quote(fragment)
                if data.startswith(token, at + 1) or (
                    data.startswith(" ", at + 1) and data.startswith(token, at + 2)
                ):
                    return len(token) - 2
    lengths = wire_lengths(data, key)
    return lengths[0] if lengths else None

