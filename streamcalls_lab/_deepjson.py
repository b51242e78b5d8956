"""JSON at any depth, read without recursion.

Arguments nested 5,000 deep are valid JSON, but ``json.loads`` raises ``RecursionError`` on
them, orjson refuses anything deeper than 1,024 (``JSONDecodeError: depth limit exceeded``, which
is no verdict on the text), and comparing or dumping a deep Python value recurses too. Here
JSON is judged and parsed as ``json.loads`` would (the same grammar: ``NaN`` and ``Infinity``
too), at any depth, with an explicit stack: :func:`is_json` says whether text is JSON;
:func:`loads` parses it, a value no deeper than :data:`SHALLOW` exactly as ``json.loads``
gives it, a deeper one with each container at depth :data:`SHALLOW` as a :class:`Deep`, which
compares (with another ``Deep`` or a plain value) by its canonical text; :func:`dumps` is
``json.dumps(value, ensure_ascii=False, sort_keys=True)`` for any value :func:`loads` gives.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring as _quote  # the C escaper, non-ASCII kept
from typing import Any

import orjson

SHALLOW = 200
"""Deeper than this, containers are :class:`Deep` values: a comparison or a dump of the rest
recurses at most this far."""
_TOKEN = re.compile(
    r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
    r"|(true|false|null|NaN|Infinity|-Infinity)|([\[\]{},:]))")
_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SCALARS = re.compile(
    r'("(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|NaN|-?Infinity)"
    r"|[ \t\n\r]+")


def _scalar(m: re.Match[str]) -> str:
    """A string as ``s``, another scalar as ``v``, whitespace as nothing: the skeleton."""
    c = m.group()[0]
    return "s" if c == '"' else "" if c in " \t\n\r" else "v"


# what may follow, in a skeleton: (state, character) -> state; a string is a key or a value
_NEXT = {
    ("value", "s"): "after", ("value", "v"): "after", ("value", "["): "first value",
    ("value", "{"): "first key",
    ("first value", "s"): "after", ("first value", "v"): "after",
    ("first value", "["): "first value", ("first value", "{"): "first key",
    ("first key", "s"): "colon", ("key", "s"): "colon", ("colon", ":"): "value",
}


def _valid_skeleton(skeleton: str) -> bool:
    """Whether a skeleton (strings ``s``, other scalars ``v``, brackets, ``,`` and ``:``,
    nothing else) is one JSON value: a loop over characters with a stack of brackets."""
    stack: list[str] = []
    state, step = "value", _NEXT.get
    for c in skeleton:
        nxt = step((state, c))
        if nxt is not None:
            if c in "[{":
                stack.append(c)
            state = nxt
            continue
        if state == "after" and stack:
            if c == ",":
                state = "value" if stack[-1] == "[" else "key"
                continue
            if c == ("]" if stack[-1] == "[" else "}"):
                stack.pop()
                state = "after" if stack else "end"
                continue
        elif (state, c) in (("first value", "]"), ("first key", "}")):
            stack.pop()
            state = "after" if stack else "end"
            continue
        return False
    return state == "end" or (state == "after" and not stack)


_LITERALS = {"true": True, "false": False, "null": None, "NaN": float("nan"),
             "Infinity": float("inf"), "-Infinity": float("-inf")}
_plain_dumps = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


class Deep:
    """A JSON container deeper than :data:`SHALLOW` in a parsed value, held as its canonical
    text (``json.dumps(..., ensure_ascii=False, sort_keys=True)``). Equal to another
    ``Deep``, or a list or dict, of the same canonical text (so ``1`` and ``1.0`` differ
    here, as their texts do)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Deep):
            return self.text == other.text
        if isinstance(other, list | dict):
            return self.text == dumps(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def depth(text: str) -> int:
    """How deep ``text``'s containers nest (brackets inside strings aside)."""
    if text.count("[") + text.count("{") == 0:
        return 0
    most = level = 0
    for m in _BRACKET.finditer(text):
        c = m.group()
        if c in "[{":
            level += 1
            most = max(most, level)
        elif c in "]}":
            level -= 1
    return most


def _shallow(text: str) -> bool:
    return text.count("[") + text.count("{") <= SHALLOW or depth(text) <= SHALLOW


def is_json(text: str | bytes) -> bool:
    """Whether ``json.loads`` would accept ``text`` given the stack for it: at any depth."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    else:
        return True
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return False
    if text.count("[") + text.count("{") <= SHALLOW:
        try:
            json.loads(text)
        except ValueError:
            return False
        return True
    return _deep_is_json(text)


def _deep_is_json(text: str) -> bool:
    """:func:`is_json` for text too deep for ``json.loads``: its skeleton checked."""
    return _valid_skeleton(_SCALARS.sub(_scalar, text))


def loads(text: str | bytes) -> Any:
    """``json.loads(text)`` at any depth (``ValueError`` when it is not JSON): containers at
    depth :data:`SHALLOW` and below are :class:`Deep`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if _shallow(text):
        return json.loads(text)
    return _parse(text, build=True)


_WIDE = re.compile(r"[0-9]{309,}")
"""A run of digits no double holds (about 1.8e308 is the largest)."""


def _finite(token: str) -> float:
    value = float(token)
    if value - value != 0:  # inf (NaN never reaches here: orjson read the text without it)
        raise ValueError(f"number is infinity when parsed as double: {token[:40]}")
    return value


def beyond_orjson(text: str, error: orjson.JSONDecodeError) -> Any:
    """``text``, which orjson refused with ``error``, parsed where orjson's limit, not the
    JSON, was at fault: nested past its 1,024 levels (:func:`loads`), or holding an integer
    past a double's range (``number is infinity``), which json.loads and msgspec read exactly
    (up to Python's 4,300 digits) and orjson cannot; ``ValueError`` for anything else (a
    float past a double's range among them, as orjson and msgspec refuse it)."""
    why = str(error)
    if why.startswith("depth limit exceeded"):
        return loads(text)
    if why.startswith("number is infinity"):
        try:  # every other rule as orjson judges it: the wide runs made small
            orjson.loads(_WIDE.sub("0", text))
        except orjson.JSONDecodeError as e:
            raise ValueError(str(e)) from None
        return json.loads(text, parse_float=_finite)
    raise ValueError(why)


def parse(text: str | bytes) -> Any:
    """``orjson.loads(text)``, and where orjson refused it only for a limit of its own, the
    value as :func:`beyond_orjson` reads it; else orjson's own ``JSONDecodeError``. Every
    reader of JSON text the kit is handed (a frame's data, a log's lines) parses with it, so
    none calls invalid what another reads."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        try:
            return beyond_orjson(text if isinstance(text, str) else text.decode(), e)
        except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
            raise e from None


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, sort_keys=True)`` at any depth (a
    :class:`Deep` is its text)."""
    if not isinstance(value, _CONTAINERS):
        return _plain_dumps(value)
    out: list[str] = []
    write = out.append
    stack: list[Any] = [value]  # values to write, and (text,): text written as it is
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if type(item) is tuple:
            write(item[0])
        elif type(item) is str:
            write(_quote(item))
        elif isinstance(item, Deep):
            write(item.text)
        elif isinstance(item, list | dict):
            keyed = isinstance(item, dict)
            members = sorted(item.items()) if keyed else item
            if not members:
                write("{}" if keyed else "[]")
                continue
            write("{" if keyed else "[")
            push(_CLOSE_DICT if keyed else _CLOSE_LIST)
            for i in range(len(members) - 1, -1, -1):  # pushed last first: written in order
                if keyed:
                    key, v = members[i]
                    push(v)
                    name = _quote(key) if type(key) is str else _plain_dumps(key)
                    push((name + ": ",))
                else:
                    push(members[i])
                if i:
                    push(_COMMA)
        else:
            write(_plain_dumps(item))
    return "".join(out)


_CONTAINERS = (list, dict, Deep)
_CLOSE_LIST, _CLOSE_DICT, _COMMA = ("]",), ("}",), (", ",)


# states of the parse: what the next token may be
_VALUE, _FIRST_VALUE, _KEY, _FIRST_KEY, _COLON, _AFTER, _END = range(7)


_raw_decode = json.JSONDecoder().raw_decode


def raw_decode(text: str, at: int = 0) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, at)`` at any depth: the JSON value that starts
    at ``at``, and where it ends (``ValueError`` when none does)."""
    try:
        return _raw_decode(text, at)
    except RecursionError:
        return _parse(text, build=True, pos=at, whole=False)


def _parse(text: str, *, build: bool, pos: int = 0, whole: bool = True) -> Any:
    """``json.loads``' grammar with an explicit stack; the value when ``build`` (``whole``
    False: the first value from ``pos`` on, and where it ends)."""
    stack: list[list[Any]] = []  # [container, pending key] per open container
    state, root = _VALUE, None
    while True:
        if state == _END and not whole:
            return root, pos
        m = _TOKEN.match(text, pos)
        if m is None:
            if state == _END and not text[pos:].strip(" \t\n\r"):
                return root
            raise ValueError(f"not JSON: unexpected text at char {pos}")
        pos = m.end()
        string, number, literal, punct = m.groups()
        value: Any = _NOTHING
        if state in (_VALUE, _FIRST_VALUE):
            if punct == "[" or punct == "{":
                stack.append([[] if punct == "[" else {}, None])
                state = _FIRST_VALUE if punct == "[" else _FIRST_KEY
                continue
            if punct == "]" and state == _FIRST_VALUE:
                value = stack.pop()[0]
            elif punct is None:
                value = (_string(string) if string is not None
                         else _number(number) if number is not None
                         else _LITERALS[literal]) if build else None
            else:
                raise ValueError(f"not JSON: unexpected {punct!r} at char {m.start(4)}")
        elif state in (_KEY, _FIRST_KEY):
            if string is not None:
                stack[-1][1] = _string(string) if build else ""
                state = _COLON
                continue
            if punct == "}" and state == _FIRST_KEY:
                value = stack.pop()[0]
            else:
                raise ValueError(f"not JSON: expected a key at char {m.start()}")
        elif state == _COLON:
            if punct != ":":
                raise ValueError(f"not JSON: expected ':' at char {m.start()}")
            state = _VALUE
            continue
        elif state == _AFTER:
            top = stack[-1][0]
            if punct == ",":
                state = _VALUE if isinstance(top, list) else _KEY
                continue
            if punct == ("]" if isinstance(top, list) else "}"):
                value = stack.pop()[0]
            else:
                raise ValueError(f"not JSON: expected ',' or a close at char {m.start()}")
        else:
            raise ValueError(f"not JSON: extra data at char {m.start()}")
        if build and len(stack) == SHALLOW and isinstance(value, (list, dict)):
            value = Deep(dumps(value))
        if not stack:
            root, state = value, _END
            continue
        top = stack[-1]
        if isinstance(top[0], list):
            if build:
                top[0].append(value)
        elif build:
            top[0][top[1]] = value
        state = _AFTER


_NOTHING = object()


def _number(token: str) -> int | float:
    return json.loads(token)


def _string(token: str) -> str:
    return token[1:-1] if "\\" not in token else json.loads(token)
