"""Classes that change each argument fragment on its way into the buffer: ``trim``
(whitespace stripped) and ``decode_each`` (escapes decoded fragment by fragment)."""

from __future__ import annotations

import json
import re

from ..accumulate import Accumulator, CallBuffer
from .recognise import (
    _each_call,
    deleted_only,
)
from .registry import BugClass
from .symptom import ERROR


class Trim(Accumulator):
    """trim: ``.strip()`` on every argument fragment.

    Whitespace at a join is usually inside a string value, where it is data: the
    result still parses, with words glued together. discourse/discourse-ai#499
    ("support spaces within arguments for Open AI") fixed a handler that dropped a
    fragment consisting of a single space.
    """

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        buf.parts.append(fragment.strip())


_ESCAPE = re.compile(r'(?:\\u[0-9a-fA-F]{4})+|\\["\\/bfnrt]')


ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
"""One JSON escape (``\\n``, ``\\"``, ``\\u00e9``): what a split must not fall inside."""


def unescape_fragment(fragment: str) -> str:
    """A fragment with its JSON escapes turned into characters, as a per-fragment decoder does.

    An escape cut by the split (a trailing ``\\`` or ``\\u00``) cannot be decoded on its
    own, so this raises ``ValueError``, as ``json.loads`` on the piece would.
    """
    out: list[str] = []
    at = 0
    while (slash := fragment.find("\\", at)) >= 0:
        out.append(fragment[at:slash])
        m = _ESCAPE.match(fragment, slash)
        if m is None:
            raise ValueError(f"cannot decode {fragment[slash:slash + 6]!r} on its own: "
                             "the escape was cut, its rest is in the next fragment")
        out.append(json.loads(f'"{m.group()}"'))
        at = m.end()
    out.append(fragment[at:])
    return "".join(out)


class DecodeEach(Accumulator):
    """decode_each: interprets the JSON escapes of each fragment on its own.

    What this one does (decided here, so the harm is visible): whole escapes are
    replaced by their characters, so the buffer no longer holds what was sent
    (``\\"`` becomes a bare quote and the arguments stop parsing; ``\\n`` becomes a raw
    newline, which strict JSON rejects; ``\\u00e9`` becomes ``é``). A split inside an
    escape (``\\`` | ``n``, ``\\u00`` | ``e9``) cannot be decoded at all: ``feed`` raises
    ``ValueError`` and the turn is lost. The streaming-JSON form of the same bug:
    ultrajson/ultrajson#216 and simplejson/simplejson#135 (failing tests for
    ``\\u00`` | ``fc`` split across two reads); bojieli/ai-agent-book#194 parsed each
    ``input_json_delta`` on its own, so every input longer than one fragment came out ``{}``.
    """

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        buf.parts.append(unescape_fragment(fragment))


def _escape_char(token: str) -> str:
    return json.loads(f'"{token}"')


def partly_decoded(sent: str, got: str) -> bool:
    """``got`` is ``sent`` with some of its JSON escapes replaced by their characters."""
    if got == sent:
        return False
    i = j = 0
    while i < len(sent):
        m = ESCAPE.match(sent, i)
        if m is None:
            if j >= len(got) or got[j] != sent[i]:
                return False
            i, j = i + 1, j + 1
            continue
        token = m.group()
        pair = ESCAPE.match(sent, m.end())
        both = token + pair.group() if pair and token[1] == "u" and pair.group()[1] == "u" else ""
        if got.startswith(token, j):
            i, j = m.end(), j + len(token)
        elif both and got.startswith(_escape_char(both), j):
            i, j = pair.end(), j + len(_escape_char(both))  # type: ignore[union-attr]
        elif got.startswith(_escape_char(token), j):
            i, j = m.end(), j + len(_escape_char(token))
        else:
            return False
    return j == len(got)


TRIM = BugClass(
    "trim",
    "Stripped whitespace off each fragment, taking it for formatting; at a join it is "
    "usually inside a string value, so append every fragment exactly as sent.",
    ("discourse/discourse-ai#499",),
    lambda s: _each_call(s, lambda a, b: deleted_only(a, b, str.isspace)),
    Trim,
    # The chapter's mangled ticket summary: a boundary right before a space inside it.
    {"args": '{"summary": "urgent request from ops about the March invoice run"}',
     "split": 27},
    client=True)

_DECODE, _RAW, _DROP = 0, 1, 2
_PIECES_UP_TO = 4096
"""Longest argument text :func:`decoded_in_pieces` searches (its search is quadratic)."""


def decoded_in_pieces(sent: str, got: str, *, drop: bool = False) -> bool:
    """``got`` is what decoding ``sent``'s escapes piece by piece makes of it, for some cut of
    ``sent`` into pieces: each piece decoded on its own, or (where it could not be) kept raw,
    or, with ``drop``, left out. A cut may fall inside an escape, and the rest of it is then
    read afresh (``\\\\`` cut after its first backslash leaves ``\\t`` to become a tab): every
    variant a per-fragment decoder is written in (raise aside) gives such a ``got``.
    """
    if got == sent or len(sent) > _PIECES_UP_TO:
        return got != sent and partly_decoded(sent, got)
    n, m = len(sent), len(got)
    modes = (_DECODE, _RAW, _DROP) if drop else (_DECODE, _RAW)
    seen: set[tuple[int, int, int, bool]] = set()
    # (at in sent, at in got, how the current piece is read, a backslash in the dropped piece)
    todo = [(0, 0, mode, False) for mode in modes]
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        i, j, mode, slash = state
        if i == n:
            if j == m and (mode != _DROP or slash):
                return True
            continue
        if i and (mode != _DROP or slash):  # a new piece may start anywhere
            todo += [(i, j, other, False) for other in modes if other != mode]
        c = sent[i]
        if mode == _DROP:
            todo.append((i + 1, j, _DROP, slash or c == "\\"))
            continue
        token = ESCAPE.match(sent, i) if mode == _DECODE and c == "\\" else None
        if token is not None:
            end = token.end()
            pair = ESCAPE.match(sent, end) if token.group()[1] == "u" else None
            if pair is not None and pair.group()[1] == "u":
                both = _escape_char(token.group() + pair.group())
                if got.startswith(both, j) and len(both) == 1:  # a surrogate pair, whole
                    todo.append((pair.end(), j + 1, mode, False))
            char = _escape_char(token.group())
            if got.startswith(char, j):
                todo.append((end, j + len(char), mode, False))
        elif mode == _DECODE and c == "\\":
            continue  # an escape this piece cannot decode: the piece is kept raw or dropped
        if j < m and got[j] == c:
            todo.append((i + 1, j + 1, mode, False))
    return False


_DECODE_ERROR = re.compile(r"(?i)decod|escape|unterminated|json|ValueError|SyntaxError")
"""What a per-fragment decoder raises on a cut escape (json.loads' JSONDecodeError, the
unicode_escape codec's UnicodeDecodeError, JavaScript's SyntaxError, a ValueError)."""


DECODE_EACH = BugClass(
    "decode_each",
    "Decoded each fragment's JSON escapes on its own; an escape can be cut across "
    "fragments and decoding changes the bytes, so keep fragments raw and parse the "
    "whole buffer once, at the stop.",
    ("bojieli/ai-agent-book#194", "ultrajson/ultrajson#216", "simplejson/simplejson#135"),
    # raised decoding a cut escape, or (skipped, kept raw or dropped) changed the text
    lambda s: (s.aspect == ERROR and s.escape_cut and not s.got and not s.hung
               and _DECODE_ERROR.search(s.error) is not None)
    or _each_call(s, lambda a, b: decoded_in_pieces(a, b, drop=s.escape_cut)),
    DecodeEach,
    # A boundary inside the \\n escape: the backslash ends one fragment, n starts the next.
    {"args": '{"text": "line one\\nline two", "quote": "say \\"hi\\""}', "split": 19},
    client=True)
