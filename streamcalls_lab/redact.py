"""Redact a capture for sharing: every value's characters replaced, every measurement kept.

What this kit measures is geometry: how long each fragment is (``chars``
and ``wire_chars``), where the splits fall, where the escapes sit, when
each read arrived. Redaction keeps all of it and replaces the data:

- **Values are data, keys are schema.** Inside tool-call arguments (JSON
  streamed as text, read across fragments with one lexer per call) the
  characters of string values become filler and digits of numbers become
  ``1``; keys, punctuation, whitespace and ``true``/``false``/``null`` stay,
  so the arguments parse exactly as before. Text deltas, thinking,
  instructions and any other string become filler except their whitespace.
- **Every character keeps its size in all three measures.** A filler has the
  same UTF-8 length as what it replaces (``x``, ``ø``, ``░``, ``𝕩``) and is
  written in the same form: raw stays raw, ``\\u00e9`` becomes another
  six-character ``\\u`` escape, a surrogate pair another pair. Characters
  that have a two-character escape (``"`` ``\\`` ``/`` and control
  characters) are never replaced, so an escape stays that escape. Hence the
  file keeps its byte length and the timing sidecar, copied untouched, still
  adds up.
- **Ids are replaced consistently:** the same id maps to the same stand-in
  everywhere a run sees it (an HMAC of the id, letters to letters, digits to
  digits, the ``toolu_``/``call_`` prefix kept).
- Kept as they are: SSE field names and comments, event types, object keys,
  numbers outside arguments (indexes, token counts), and the values of
  schema keys (``type``, ``role``, ``name``, ``model``, ``finish_reason``...).

- Numbers under a ``bytes`` key (Chat ``logprobs`` spell each token out as
  byte values) get their digits replaced too.

Known gaps: a data line that is not valid UTF-8 is left as it is, and so is
any text outside ``data`` lines (SSE ``id:`` fields, comments).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from . import timing
from .eventstream import is_eventstream
from .sse import SSEDecoder

FILLERS = {1: "x", 2: "ø", 3: "░", 4: "𝕩"}
"""Filler by UTF-8 length (ASCII letters and digits keep their class: ``x``, ``X``, ``0``)."""
ID_KEYS = frozenset((
    "id", "call_id", "item_id", "tool_use_id", "tool_call_id", "response_id",
    "previous_response_id", "message_id", "responseId",
))
SCHEMA_KEYS = frozenset((
    "type", "object", "role", "name", "model", "stop_reason", "finish_reason", "status",
    "service_tier", "tool_choice", "truncation", "effort", "verbosity", "inference_geo",
    "system_fingerprint", "finishReason", "modelVersion", "event",
))
ARG_DELTA_EVENTS = frozenset((
    "response.function_call_arguments.delta", "response.mcp_call_arguments.delta",
))
WHOLE_ARG_KEYS = frozenset(("arguments", "failed_generation"))
"""Keys whose value is a whole argument string (a ``.done`` event, an error echoing a call)."""
_KEPT = frozenset(' \t\n\r"\\/\b\f')  # whitespace, and every character with a short escape
_UNIT = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # surrogate pair
    r"|\\u[0-9a-fA-F]{4}|\\.|\\|[^\\]",
    re.S,
)
_SHORT = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_TOKEN = re.compile(
    r'"(?P<s>(?:[^"\\]|\\.)*)(?P<q>"?)|(?P<p>[{}\[\],:])|(?P<w>[^\s{}\[\],:"]+)|\s+', re.S
)
_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n)")
_HEX = frozenset("0123456789abcdefABCDEF")


def fill(c: str) -> str:
    """The stand-in for one value character: same UTF-8 length, same form on the wire."""
    if c in _KEPT:
        return c
    if "a" <= c <= "z":
        return "x"
    if "A" <= c <= "Z":
        return "X"
    if "0" <= c <= "9":
        return "0"
    if 0xD800 <= ord(c) <= 0xDFFF:
        return c  # a lone surrogate has no UTF-8 form to match
    return FILLERS[len(c.encode("utf-8"))]


# -- one JSON string on the wire, unit by unit ----------------------------------------
def _decode(unit: str) -> str:
    if len(unit) == 1:
        return unit
    if unit[1] == "u" and len(unit) == 6:
        return chr(int(unit[2:], 16))
    if len(unit) == 12:
        hi, lo = int(unit[2:6], 16), int(unit[8:], 16)
        return chr(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
    return _SHORT.get(unit[1], unit[1])


def _encode(unit: str, old: str, new: str) -> str:
    """``new`` written in the same form (raw, ``\\uXXXX``, pair) and width as ``unit``."""
    if new == old:
        return unit
    if len(unit) == 1:
        return new
    upper = any(ch in "ABCDEF" for ch in unit)
    if len(unit) == 6:
        text = f"\\u{ord(new):04x}"
    elif len(unit) == 12:
        v = ord(new) - 0x10000
        text = f"\\u{0xD800 + (v >> 10):04x}\\u{0xDC00 + (v & 0x3FF):04x}"
    else:
        return unit  # a short escape: its character is never replaced
    return text.upper().replace("\\U", "\\u") if upper else text


def rewrite(wire: str, step: Callable[[str], str]) -> str:
    """A JSON string body (between its quotes) with each character passed through ``step``."""
    out = []
    for m in _UNIT.finditer(wire):
        unit = m.group()
        old = _decode(unit)
        out.append(_encode(unit, old, step(old)))
    return "".join(out)


# -- arguments: JSON streamed as text ---------------------------------------------------
class ArgsLexer:
    """Reads a JSON text one character at a time and says what replaces each.

    One instance per call, fed every fragment in order, so a split anywhere
    (inside a key, an escape, a number) changes nothing. Tolerant: a
    truncated or invalid text never raises.
    """

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.in_string = False
        self.is_key = False
        self.expect_key = False
        self.escape = 0  # 1 after a backslash, 2..5 inside the hex digits of \uXXXX

    def step(self, c: str) -> str:
        if self.in_string:
            return self._in_string(c)
        if c == '"':
            self.in_string = True
            self.is_key = bool(self.stack) and self.stack[-1] == "{" and self.expect_key
        elif c in "{[":
            self.stack.append(c)
            self.expect_key = c == "{"
        elif c in "}]":
            if self.stack:
                self.stack.pop()
            self.expect_key = False
        elif c == ":":
            self.expect_key = False
        elif c == ",":
            self.expect_key = bool(self.stack) and self.stack[-1] == "{"
        elif "0" <= c <= "9":
            return "1"  # never a leading zero, so every number stays valid
        return c

    def _in_string(self, c: str) -> str:
        if self.escape == 1:
            self.escape = 2 if c == "u" else 0
            return c
        if self.escape >= 2:
            if c not in _HEX:
                self.escape = 0
                return c
            position = self.escape - 2
            self.escape = 0 if self.escape == 5 else self.escape + 1
            return c if self.is_key else "0078"[position]  # \u0078 is "x"
        if c == "\\":
            self.escape = 1
            return c
        if c == '"':
            self.in_string = False
            return c
        return c if self.is_key else fill(c)


# -- one data payload -------------------------------------------------------------------
@dataclass
class _Turn:
    """State that runs across the frames of one capture."""

    lexers: dict[tuple[Any, ...], ArgsLexer] = field(default_factory=dict)
    chat_ids: dict[tuple[Any, ...], str] = field(default_factory=dict)

    def lexer(self, key: tuple[Any, ...]) -> ArgsLexer:
        if key not in self.lexers:
            self.lexers[key] = ArgsLexer()
        return self.lexers[key]


@dataclass
class _Str:
    start: int
    end: int
    path: tuple[Any, ...]


def _scan(text: str) -> tuple[list[_Str], dict[tuple[Any, ...], str], list[tuple[int, int]]]:
    """Value strings with their paths, scalar values by path, and number tokens under ``bytes``."""
    stack: list[list[Any]] = []  # [bracket, member key or index, expecting a key]
    strings: list[_Str] = []
    scalars: dict[tuple[Any, ...], str] = {}
    byte_numbers: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        if m.start("s") >= 0:
            value = _decoded(m.group("s"))
            top = stack[-1] if stack else None
            if top is not None and top[0] == "{" and top[2]:
                top[1] = value  # a key: it names the member that follows
                continue
            path = tuple(e[1] for e in stack)
            strings.append(_Str(m.start("s"), m.end("s"), path))
            scalars[path] = value
            continue
        kind = m.lastgroup
        if kind == "p":
            c = m.group()
            if c == "{":
                stack.append(["{", None, True])
            elif c == "[":
                stack.append(["[", 0, False])
            elif c in "}]":
                if stack:
                    stack.pop()
            elif c == ":" and stack:
                stack[-1][2] = False
            elif c == "," and stack:
                if stack[-1][0] == "{":
                    stack[-1][1], stack[-1][2] = None, True
                else:
                    stack[-1][1] += 1
        elif kind == "w":
            path = tuple(e[1] for e in stack)
            scalars[path] = m.group()
            if any(p == "bytes" for p in path if isinstance(p, str)):
                byte_numbers.append((m.start(), m.end()))
    return strings, scalars, byte_numbers


def _decoded(wire: str) -> str:
    return "".join(_decode(u.group()) for u in _UNIT.finditer(wire))


def _key_of(path: tuple[Any, ...]) -> str | None:
    for p in reversed(path):
        if isinstance(p, str):
            return p
    return None


class Redactor:
    """Redacts captures; one instance maps each id the same way in every file it sees.

    ``salt`` fixes the id mapping (the same salt gives the same output);
    without one, a random salt keeps stand-ins unlinkable across runs.
    """

    def __init__(self, salt: str | bytes | None = None) -> None:
        if salt is None:
            salt = os.urandom(16)
        self.salt = salt.encode("utf-8") if isinstance(salt, str) else salt
        self._ids: dict[str, str] = {}

    # -- ids ------------------------------------------------------------------------
    def id(self, value: str) -> str:
        """The stand-in for an id: same length and character classes, prefix kept."""
        if value in self._ids:
            return self._ids[value]
        m = re.match(r"[A-Za-z]{1,12}[_-]", value)
        keep = m.end() if m and m.end() < len(value) else 0
        stream = self._stream(value)
        out = [value[:keep]]
        for c in value[keep:]:
            b = next(stream)
            if "a" <= c <= "z":
                out.append(chr(97 + b % 26))
            elif "A" <= c <= "Z":
                out.append(chr(65 + b % 26))
            elif "0" <= c <= "9":
                out.append(chr(48 + b % 10))
            else:
                out.append(c if c.isascii() else fill(c))
        self._ids[value] = result = "".join(out)
        return result

    def _stream(self, value: str) -> Iterator[int]:
        counter = 0
        while True:
            block = hmac.new(self.salt, f"{counter}:{value}".encode(), hashlib.sha256).digest()
            yield from block
            counter += 1

    # -- a data payload ---------------------------------------------------------------
    def data(self, text: str, turn: _Turn | None = None) -> str:
        """One frame's ``data``, redacted (``turn`` carries argument lexers across frames)."""
        turn = turn if turn is not None else _Turn()
        head = text.lstrip()
        if head == "[DONE]" or not head:
            return text
        if head[0] not in '{["':
            return "".join(fill(c) for c in text)  # not JSON: all of it is data
        strings, scalars, byte_numbers = _scan(text)
        self._reset_calls(scalars, turn)
        out = list(text)  # one slot per character; each slot is rewritten at equal width
        for s in strings:
            wire = text[s.start:s.end]
            new = self._value(wire, s.path, scalars, turn)
            if new != wire:
                out[s.start:s.end] = list(new)
        for a, b in byte_numbers:
            out[a:b] = ["1" if c.isdigit() else c for c in text[a:b]]
        return "".join(out)

    def _reset_calls(self, scalars: dict[tuple[Any, ...], str], turn: _Turn) -> None:
        """A call announced anew starts a fresh lexer (a block index can be reused)."""
        kind = scalars.get(("type",))
        if kind == "content_block_start":
            turn.lexers.pop(("a", scalars.get(("index",))), None)
        elif kind == "response.output_item.added":
            turn.lexers.pop(("r", scalars.get(("output_index",))), None)
        for path, value in scalars.items():
            if len(path) >= 2 and path[-1] == "id" and "tool_calls" in path:
                key = self._chat_key(path[:-1], scalars)
                if value and turn.chat_ids.get(key) != value:
                    turn.chat_ids[key] = value
                    turn.lexers.pop(key, None)

    @staticmethod
    def _chat_key(call: tuple[Any, ...], scalars: dict[tuple[Any, ...], str]) -> tuple[Any, ...]:
        i = call.index("tool_calls")
        choice = scalars.get((*call[:2], "index"), call[1]) if call[:1] == ("choices",) else 0
        return ("c", choice, scalars.get((*call[: i + 2], "index"), call[i + 1]))

    def _value(
        self, wire: str, path: tuple[Any, ...], scalars: dict[tuple[Any, ...], str], turn: _Turn
    ) -> str:
        key = _key_of(path)
        if key in SCHEMA_KEYS:
            return wire
        if key in ID_KEYS:
            chars = iter(self.id(_decoded(wire)))
            return rewrite(wire, lambda c: next(chars))
        if key == "partial_json":
            return rewrite(wire, turn.lexer(("a", scalars.get(("index",)))).step)
        if key == "delta" and scalars.get(("type",)) in ARG_DELTA_EVENTS:
            return rewrite(wire, turn.lexer(("r", scalars.get(("output_index",)))).step)
        if key == "arguments" and "tool_calls" in path and "delta" in path:
            call = path[: path.index("tool_calls") + 2]
            return rewrite(wire, turn.lexer(self._chat_key(call, scalars)).step)
        if key in WHOLE_ARG_KEYS:
            return rewrite(wire, ArgsLexer().step)  # the whole string at once
        return rewrite(wire, fill)

    # -- a whole capture ----------------------------------------------------------------
    def capture(self, body: bytes) -> bytes:
        """The capture with every ``data`` line redacted; same length, same line layout.

        SSE only: an AWS event-stream message carries CRCs over its payload, so a rewrite
        would need new ones. Refused rather than handed back with its text untouched.
        """
        if is_eventstream(body[:1]):
            raise ValueError("redacting an AWS event-stream capture (Bedrock) is not supported: "
                             "its messages carry CRCs over the payload")
        out = bytearray(body)
        turn = _Turn()
        dec = SSEDecoder(strict=False)
        done = 0
        for fr in dec.feed(body) + dec.close():
            if fr.problem is not None or fr.end <= fr.offset:
                continue
            spans = _data_spans(body, fr.offset, fr.end)
            pieces = self.data(fr.data, turn).split("\n")
            if len(pieces) == len(spans):
                for (a, b), piece in zip(spans, pieces, strict=True):
                    out[a:b] = _same_size(piece, b - a)
            done = fr.end
        for a, b in _data_spans(body, done, len(body), tail=True):
            try:
                text = body[a:b].decode("utf-8")
            except UnicodeDecodeError:
                continue
            out[a:b] = _same_size(self.data(text, turn), b - a)
        return bytes(out)


def _same_size(text: str, size: int) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) != size:  # a bug here would shift every later offset: fail loudly
        raise AssertionError(f"redaction changed a data line's size ({size} -> {len(raw)})")
    return raw


def _data_spans(body: bytes, start: int, end: int, tail: bool = False) -> list[tuple[int, int]]:
    """Byte spans of the values of the ``data`` lines in ``body[start:end]``.

    ``tail``: also the last line when no line end closes it (a truncated capture).
    """
    lines, pos = [], start
    for m in _LINE.finditer(body, start, end):
        lines.append((m.start(1), m.end(1)))
        pos = m.end()
    if tail and pos < end:
        lines.append((pos, end))
    spans = []
    for a, b in lines:
        line = body[a:b]
        if line == b"data":
            spans.append((b, b))
        elif line.startswith(b"data:"):
            v = a + 5 + (body[a + 5 : a + 6] == b" ")
            spans.append((v, b))
    return spans


# -- files --------------------------------------------------------------------------
def redact_bytes(body: bytes, *, salt: str | bytes | None = None) -> bytes:
    """One capture's bytes, redacted (see the module docstring for what is kept)."""
    return Redactor(salt).capture(body)


def redact_file(
    src: str | PathLike[str], dst: str | PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the redacted capture to ``dst``; its timing sidecar is copied byte for byte."""
    src, dst = Path(src), Path(dst)
    if src.resolve() == dst.resolve():
        raise ValueError(f"refusing to redact {src} in place")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes((redactor or Redactor()).capture(src.read_bytes()))
    side = timing.sidecar(src)
    if side.exists():
        shutil.copyfile(side, timing.sidecar(dst))
    return dst


def redact_paths(
    paths: Iterable[str | PathLike[str]],
    out_dir: str | PathLike[str],
    *,
    salt: str | bytes | None = None,
    progress: bool | None = None,
) -> list[Path]:
    """Redact files and directories of ``.sse`` captures into ``out_dir``, one id mapping for all.

    A directory's captures keep their paths relative to it. ``progress``:
    a progress bar (``None``: only on a terminal).
    """
    from tqdm.auto import tqdm

    out_dir = Path(out_dir)
    jobs: list[tuple[Path, Path]] = []
    for p in map(Path, paths):
        if p.is_dir():
            jobs += [(f, out_dir / f.relative_to(p)) for f in sorted(p.rglob("*.sse"))]
        else:
            jobs.append((p, out_dir / p.name))
    redactor = Redactor(salt)
    disable = None if progress is None else not progress
    return [redact_file(src, dst, redactor=redactor)
            for src, dst in tqdm(jobs, desc="redact", unit="file", disable=disable)]
