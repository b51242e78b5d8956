"""Where a JSON value stands, as written, in a frame's raw data text.

Gemini and Ollama send a call's arguments as a JSON object, not a string: its fragment is
that object's text exactly as it stood in the data (a slice, never re-serialised), so
``calls()`` gives the arguments byte for byte.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import orjson

from ..events import obj

_scan = json.JSONDecoder().raw_decode  # a JSON value's end, from where it starts


@cache
def _key(key: str) -> re.Pattern[str]:
    # A bare quote after '{', ',' or whitespace opens a key: inside a string it would
    # have been escaped, and the character before it a backslash.
    return re.compile(r'(?<=[{,\s])"' + re.escape(key) + r'"[ \t\n\r]*:[ \t\n\r]*')


def value_span(data: str, key: str, value: Any, start: int, end: int) -> tuple[int, int] | None:
    """Where the value of ``key`` that parses to ``value`` stands in ``data[start:end]``.

    Parsing each candidate and comparing keeps a like-named key elsewhere (a nested
    ``"args"``, a repeated key orjson overrode) from being taken for it.
    """
    for m in _key(key).finditer(data, start, end):
        at = m.end()
        try:  # (orjson's and json's errors are ValueErrors)
            found, stop = _scan(data, at)
            if stop <= end and (
                found == value if type(value) is str  # a string reads the same in both
                else type(found) is dict and orjson.loads(data[at:stop]) == value
            ):  # an object is compared as orjson read it (big integers, floats)
                return at, stop
        except (ValueError, RecursionError):
            continue
    return None


def exact_span(data: str, key: str, value: Any, start: int, end: int, field: str
               ) -> tuple[int, int]:
    """:func:`value_span`, or a problem naming ``field`` when the value is not there."""
    span = value_span(data, key, value, start, end)
    if span is None:
        raise TypeError(f"{field}: not found as written in the data line")
    return span


def object_text(data: str, key: str, value: Any, start: int, end: int, field: str) -> str:
    """The JSON object ``value`` (of ``key``) exactly as it stands in ``data[start:end]``:
    a call's arguments as one fragment, byte for byte, never re-serialised."""
    at, stop = exact_span(data, key, obj(value, field), start, end, field)
    return data[at:stop]
