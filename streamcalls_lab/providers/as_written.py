"""Values as they stand in a frame's raw data text: escaped lengths and exact spans.

The wire lengths the chapter counts are of the escaped form inside the ``data`` JSON
(:func:`wire_length`), and Gemini and Ollama send a call's arguments as a JSON object, not a
string: its fragment is that object's text exactly as it stood in the data (a slice, never
re-serialised: :func:`object_text`), so ``calls()`` gives the arguments byte for byte.
"""

from __future__ import annotations

import re
from functools import cache
from json.encoder import encode_basestring as _quote  # the C escaper: '"' + minimal + '"'
from typing import Any

import orjson

from .. import _deepjson as deepjson
from ..events import obj


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



def raw_wire_length(raw: bytes, key: str, fragment: str) -> int | None:
    """:func:`wire_length` of a data line still in bytes (the fast path's): decoded only when
    it holds a backslash (a backslash byte is never part of another character in UTF-8).
    ``find``, not ``in``: ``in`` on bytes tries its operand as an integer first, and raises
    and clears a TypeError every time."""
    if raw.find(b"\\") < 0:
        return len(fragment)
    return escaped_wire_length(raw, key, fragment)


def escaped_wire_length(raw: bytes, key: str, fragment: str) -> int | None:
    """:func:`raw_wire_length` of a data line known to hold a backslash: what a ``Hot.rows``
    loop calls, having looked for one itself to count a plain line's length at once."""
    # wire_length's shortcut, step for step, on the bytes: the line is decoded only if it
    # misses (a lone surrogate's bytes cannot stand in valid UTF-8: it misses)
    quoted = _QUOTED.get(key)
    if quoted is None:
        if len(_QUOTED) >= 64:  # (the fast path asks of a handful of keys: a caller's own
            _QUOTED.clear()     # keys never make it grow without end)
        quoted = _QUOTED[key] = b'"%s"' % key.encode()
    # (a byte read by index and a slice compared: ``startswith`` parses its arguments from a
    # tuple, which cost more than its comparison; most lines pass here)
    at = raw.find(quoted) + len(quoted)
    if len(quoted) <= at < len(raw) and raw[at] == _COLON:
        token = _quote(fragment)
        at += 1 + (raw[at + 1:at + 2] == b" ")
        try:
            encoded = token.encode()
        except UnicodeEncodeError:  # a lone surrogate's bytes cannot stand in valid UTF-8:
            encoded = None          # it misses
        if encoded is not None and raw[at:at + len(encoded)] == encoded:
            return len(token) - 2
    return wire_length(raw.decode(), key, fragment)


_QUOTED: dict[str, bytes] = {}  # each key as its quoted bytes, made once (bounded)
_COLON = ord(":")


# -- JSON values as written ---------------------------------------------------------------
_scan = deepjson.raw_decode  # a JSON value's end, from where it starts (at any depth)


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
                else type(found) is type(value)  # (True == 1: the type tells them apart)
                and _as_orjson_reads(data[at:stop], found) == value
            ):  # any other value is compared as orjson read it (big integers, floats)
                return at, stop
        except ValueError:
            continue
    return None


def _as_orjson_reads(text: str, found: Any) -> Any:
    """``text`` as orjson reads it, or (past orjson's limits) as the kit's decoder then
    does: nested past 1,024, ``found``, :func:`.deepjson.raw_decode`'s reading of it (not
    parsed again); an integer wider than a double, :func:`.deepjson.beyond_orjson`'s."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        if str(e).startswith("depth limit exceeded"):
            return found
        return deepjson.beyond_orjson(text, e)


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


def value_text(data: str, key: str, value: Any, start: int, end: int, field: str) -> str:
    """Any JSON value (of ``key``: an object, array, string, number...) exactly as it stands
    in ``data[start:end]``, quotes and escapes included: where the wire gives a call's input
    as a parsed value of any type, its text byte for byte."""
    at, stop = exact_span(data, key, value, start, end, field)
    return data[at:stop]


def object_after(data: str, key: str, value: Any, at: int, field: str) -> tuple[str, int]:
    """:func:`object_text` of the first such object after ``at``, and where it ends: a whole
    response's calls, each looked for after the one before."""
    start, end = exact_span(data, key, obj(value, field), at, len(data), field)
    return data[start:end], end
