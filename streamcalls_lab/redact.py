"""Redact a capture for sharing: every value's characters replaced, every measurement kept.

What this kit measures is geometry: how long each fragment is (``chars``
and ``wire_chars``), where the splits fall, where the escapes sit, when
each read arrived. Redaction keeps all of it and replaces the data:

- **Values are data, keys are schema.** A call's arguments are redacted as one JSON
  document: its fragments joined, lexed once (:func:`arguments`), the result cut back
  into the fragments at the same places. The characters of string values become filler
  (the hex digits of a value's ``\\uXXXX`` too) and digits of numbers become ``1``;
  keys, punctuation, whitespace and ``true``/``false``/``null`` stay, so the arguments
  parse exactly as before. Arguments that prove not to be JSON are filler throughout.
  Text deltas, thinking, instructions and any other string become filler except their
  whitespace.
- **Every character keeps its size in all three measures**, so every call keeps its
  number of fragments and each fragment its length (``chars`` and ``wire_chars``). A filler has the
  same UTF-8 length as what it replaces (``x``, ``ø``, ``░``, ``𝕩``) and is
  written in the same form: raw stays raw, ``\\u00e9`` becomes another
  six-character ``\\u`` escape, a surrogate pair another pair. Characters
  that have a two-character escape (``"`` ``\\`` ``/`` and control
  characters) are never replaced, so an escape stays that escape. Hence the
  file keeps its byte length and the timing sidecar, copied untouched, still
  adds up.
- **Ids are replaced consistently and one to one:** the same id maps to the same
  stand-in everywhere a run sees it (an HMAC of the id, letters to letters, digits to
  digits, the ``toolu_``/``call_`` prefix kept), and two ids never to one stand-in
  (a stand-in already given is drawn again, a nearly full space walked in order).

**Nothing here names a format's fields.** What is structure and what is data comes from
the capture's own format's declarations (``FORMAT`` in ``providers/<format>.py``), and no
other's: its :class:`~.providers.spec.Envelope` (containers, schema values, numbers, ids,
the keys kept at a payload's top level, a wrapped inner event, event-stream headers) and
its :class:`~.providers.spec.Fields` (call ids are ids; the keys holding argument fragments
and whole arguments). A capture is read twice. The first pass finds its format (the first
frame a reader recognises, the frames before it read by that reader too, as ``load()``
does) and collects each call's document: the fragments the reader reads, in order (a new
document at each announcement of a block). The second pass redacts every frame under that
format's list and gives each fragment its slice of its call's redacted document (the string
whose value is the fragment, looked for under the format's fragment keys first), so a
split anywhere, inside an escape too, changes nothing. A done event's whole arguments, and
any string under a whole-argument key, are a document of their own. A capture no reader
recognises keeps nothing but its structure; so does, but for its event name, a frame its
reader cannot read or reads as an event the format does not declare (``WireFormat.events``).

**Default deny.** Every JSON string and number is replaced unless the policy
below names it; so a format added later is redacted whole before anyone declares
its structure. Kept on purpose, because loading needs them to find the same
events, blocks and calls:

- object keys (schema, in arguments too: ``{"city": ...}`` keeps ``city``);
  ``true``/``false``/``null``; punctuation and whitespace;
- SSE field names, ``event:`` values (event types) and ``retry:`` digits;
  comments only when a known keep-alive (``ping``, ``OPENROUTER PROCESSING``...);
- the values of the format's schema keys (``type``, ``role``, tool ``name``,
  ``model``, ``finish_reason``...), and the numbers the format names (indexes, token
  counts), but only where every object above them is one of the format's
  containers, and at a payload's top level only the keys the format keeps there
  (``Envelope.top``). Inside an argument object (Gemini ``functionCall.args``, Anthropic
  ``input``, Ollama ``arguments``, Bedrock ``toolUse.input``) or any object not
  listed, a ``name`` or ``status`` or ``42`` is data like any other;
- an id's provider prefix (``toolu_``, ``call_``...: :data:`_ID_PREFIX`); the
  rest of the id, ``id:`` fields included, is replaced consistently.

Every AWS event-stream header value, of any type, is replaced except those the format
names (``Envelope.headers``: ``:event-type``, ``:message-type``...): a string's
characters filler, a byte array's bytes ``x``, an integer or timestamp 1, a UUID a
consistent stand-in (a boolean is its type byte, kept); each message's CRC is recomputed
(one that was wrong stays wrong). A base64 inner event the format declares
(``Envelope.wrapped``: Bedrock InvokeModel's ``bytes``) is unwrapped, redacted and
wrapped again. A line that is no SSE field (every reader ignores it), a data line that
is not JSON, junk inside broken JSON and the characters around bytes
that are not UTF-8 are filler; the stray bytes themselves stay (a broken byte
spells nothing) so the capture fails to decode exactly where it did.

An NDJSON capture (Ollama) is redacted line by line, each line as a ``data`` payload:
the framing is the one ``load()`` reads (one detection, ``framing.FRAMINGS``), and each
framing's ``rewrite`` re-frames in place. **Refused, nothing written:** an empty file,
bytes with no complete SSE frame or event-stream message (a HAR, a PNG, a stream cut in
its first frame): :class:`Refused` names the file, the byte and why.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

import orjson

from . import _deepjson as deepjson
from . import echoes, timing
from .errors import CaptureError
from .events import PAYLOAD_ERRORS, Ev
from .framing import framing_of, jsonarray, ndjson, sse
from .providers import FORMATS, sniff
from .providers.spec import Reader, WireFormat
from .sources import CAPTURE_SUFFIXES, entry_problem, in_progress, over_files, path_tag

FILLERS = {1: "x", 2: "ø", 3: "░", 4: "𝕩"}
"""Filler by UTF-8 length (ASCII letters and digits keep their class: ``x``, ``X``, ``0``)."""
KEPT_COMMENTS = frozenset(("", "ping", "keep-alive", "keepalive", "heartbeat",
                           "OPENROUTER PROCESSING"))
"""SSE comments kept as they are (keep-alives servers send); any other comment is filler."""
_LITERALS = frozenset(("true", "false", "null"))
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ID_PREFIX = re.compile(
    r"(?:toolu|srvtoolu|call|msg|resp|fc|rs|msg|chatcmpl|cmpl|gen|item|tooluse|ctc|mcp|ws|"
    r"ig|run|req|evt|chunk)[_-]"
)
"""Id prefixes providers use (``toolu_``, ``call_``...), kept; any other prefix is replaced."""
_NUMBER_PREFIX = re.compile(r"-?[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?")
_UNNAMED = frozenset((sse.EVENT, jsonarray.EVENT, ndjson.EVENT))
"""The event names frames get when nothing names them (SSE's default, an array's element,
an NDJSON line): a format whose frames carry no name of their own reads them all so."""
_HEADER_SIZES = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}  # event-stream header value sizes

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
_STRING = json.JSONDecoder(strict=False)  # control characters raw in a string, as orjson reads
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

    Fed a call's whole argument document (:func:`arguments`), so a split anywhere
    (inside a key, an escape, a number) changes nothing. Tolerant: a
    truncated or invalid text never raises. ``broken`` says a bare character was
    neither a number's nor a literal's: the text is not JSON (a custom tool's free
    text), which :func:`arguments` then fills all of, as any other text.
    """

    def __init__(self) -> None:
        self.broken = False
        self.stack: list[str] = []
        self.in_string = False
        self.is_key = False
        self.expect_key = False
        self.escape = 0  # 1 after a backslash, 2..5 inside the hex digits of \uXXXX
        self.word = ""  # the bare word (number or literal) being read

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
        elif not c.isspace():
            return self._bare(c)
        self.word = ""
        return c

    def _bare(self, c: str) -> str:
        """A character of a number or literal; anything else (arguments that are not JSON)
        is data, so filler."""
        self.word += c
        if any(lit.startswith(self.word) for lit in _LITERALS):
            return c
        if _NUMBER_PREFIX.fullmatch(self.word):
            return "1" if "0" <= c <= "9" else c  # never a leading zero: still valid
        self.broken = True  # a literal's first letters may have been kept: redo it all
        return fill(c)

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


# -- what the formats declare ------------------------------------------------------------
@dataclass(frozen=True)
class Policy:
    """What redaction keeps and lexes in one format, read from its declaration (never named
    here): its :class:`~.providers.spec.Envelope` and :class:`~.providers.spec.Fields`."""

    containers: frozenset[str] = frozenset()
    schema: frozenset[str] = frozenset()
    numbers: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()
    """The envelope's ids and every key holding a call id."""
    top: frozenset[str] | None = frozenset()
    """The keys kept at a payload's top level (None: every key kept below it)."""
    wrapped: frozenset[str] = frozenset()
    headers: frozenset[str] = frozenset()
    fragment: frozenset[str] = frozenset()
    whole: frozenset[str] = frozenset()
    events: frozenset[str] = frozenset()
    """The event names the format declares (``WireFormat.events``): a frame its reader
    reads as any other event is a payload of unknown shape."""
    names: frozenset[str] = frozenset()
    """Top-level values kept as they are: a payload of unknown shape keeps the event name
    its reader read in it (the ``event`` column says it anyway), and nothing else."""

    @classmethod
    def of(cls, fmt: WireFormat) -> Policy:
        """``fmt``'s own declarations: what it keeps, and which keys hold argument text."""
        e, f = fmt.envelope, fmt.fields
        ids = frozenset((*e.ids, *f.call_id))
        return cls(containers=frozenset(e.containers), schema=frozenset(e.schema),
                   numbers=frozenset(e.numbers), ids=ids,
                   top=None if e.top is None else e.top | ids,
                   wrapped=frozenset(() if e.wrapped is None else (e.wrapped,)),
                   headers=frozenset(e.headers), fragment=frozenset(f.fragment),
                   whole=frozenset(f.whole),
                   events=frozenset(n for names in fmt.events.values() for n in names))

    def reading(self, rows: Sequence[tuple[Ev, str | None]] | None) -> Policy:
        """What is kept in one frame: this policy where the reader read events the format
        declares; in a frame it cannot read, or of an event it does not know, no schema
        value but the event name the reader read (its indexes, counts and ids as here: they
        place the frame's rows, and ids are replaced either way)."""
        if rows is not None and all(ev.event in self.events or ev.event in _UNNAMED
                                    for ev, _ in rows):
            return self
        return replace(self, schema=frozenset(),
                       names=frozenset(ev.event for ev, _ in rows or ()))

    def structural(self, path: tuple[Any, ...]) -> bool:
        """Whether every object above a value is a container (not arguments, not unknown),
        and a value at the top level one the format keeps there."""
        if len(path) == 1 and self.top is not None and path[0] not in self.top:
            return False
        return all(isinstance(p, int) or p in self.containers for p in path[:-1])


def policy(name: str | None = None) -> Policy:
    """What is kept in a capture of format ``name``: that format's own declaration alone.

    ``None`` (a capture no reader recognises): nothing but structure (keys, punctuation,
    literals), as no declaration vouches for any value. No format's list stands in for
    another's: a gateway that mixes envelopes is a format that declares them all
    (Bedrock InvokeModel declares Anthropic's and ConverseStream's).
    """
    return Policy() if name is None else Policy.of(FORMATS[name])


def arguments(text: str) -> str:
    """A call's whole argument text redacted as one JSON document, character for character:
    keys, punctuation, whitespace and literals kept, every string value's characters filler
    (the hex digits of a value's ``\\uXXXX`` too), every digit of a number ``1``. Text that
    proves not to be JSON (a custom tool's free text) is filler throughout."""
    lexer = ArgsLexer()
    out = "".join(map(lexer.step, text))
    return "".join(map(fill, text)) if lexer.broken else out


# -- one capture's frames -----------------------------------------------------------------
_Key = tuple[Any, ...]


@dataclass
class _Turn:
    """State that runs across the frames of one capture, in one of redaction's two passes.

    The first pass (``plan`` None) writes nothing: it finds the capture's format (the
    first frame a reader recognises; the frames before it are read by that reader too, as
    ``load()`` reads them) and collects each call's argument document, the fragments the
    reader reads, in order (a fresh document at each announcement of a block). Each
    document is then redacted once, whole (:func:`arguments`). The second pass knows the
    format from its first frame, redacts every frame under that format's :func:`policy`
    alone, and replaces each fragment by its slice of its call's redacted document.
    """

    name: str | None = None
    plan: list[str] | None = None
    """The second pass: each document, redacted (by the order the first pass opened them)."""
    policy: Policy = field(default_factory=Policy)
    reader: Reader | None = None
    docs: list[list[str]] = field(default_factory=list)
    used: list[int] = field(default_factory=list)
    """How many characters of each redacted document the frames so far have taken."""
    open: dict[_Key, int] = field(default_factory=dict)
    pending: list[tuple[str, Any, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.name is not None:
            self.reader, self.policy = FORMATS[self.name].reader(), policy(self.name)

    @property
    def collecting(self) -> bool:
        return self.plan is None

    def planned(self) -> _Turn:
        """The second pass: this pass's format, and its documents redacted."""
        return _Turn(self.name, [arguments("".join(d)) for d in self.docs])

    def rows(self, event: str, text: str) -> list[tuple[Ev, str | None]] | None:
        """What the format's reader reads in one frame, each argument fragment with what
        replaces it (the second pass); None when no reader reads it."""
        try:
            payload = deepjson.parse(text)
        except orjson.JSONDecodeError:
            return None
        if self.reader is None:
            name = sniff(event, payload)
            if name is None:
                self.pending.append((event, payload, text))
                return None
            self.name, self.reader = name, FORMATS[name].reader()
            for held in self.pending:
                self._read(*held)
            self.pending.clear()
        return self._read(event, payload, text)

    def _read(self, event: str, payload: Any, text: str) -> list[tuple[Ev, str | None]] | None:
        assert self.reader is not None
        try:
            rows = self.reader.normalize(event, payload, text)
        except PAYLOAD_ERRORS:
            return None  # a frame load() reports as a problem: default deny alone
        out: list[tuple[Ev, str | None]] = []
        for ev in rows:
            piece = None
            key = (ev.choice, ev.block)
            if ev.kind == "call_start":
                self.open[key] = self._document()
            elif ev.kind == "args_delta" and ev.fragment:
                doc = self.open.get(key)
                if doc is None:
                    doc = self.open[key] = self._document()
                piece = self._piece(doc, ev.fragment)
            out.append((ev, piece))
        return out

    def _document(self) -> int:
        self.docs.append([])
        self.used.append(0)
        return len(self.docs) - 1

    def _piece(self, doc: int, fragment: str) -> str | None:
        if self.plan is None:
            self.docs[doc].append(fragment)
            return None
        start = self.used[doc]
        self.used[doc] += len(fragment)
        return self.plan[doc][start:start + len(fragment)]

    def steps(self, rows: Sequence[tuple[Ev, str | None]],
              strings: Sequence[_Str]) -> dict[int, Callable[[str], str]]:
        """Which of a payload's strings are argument text, each with what rewrites it: a
        fragment the reader read (found by its value, under the format's fragment keys
        first) takes its slice of its call's document; every other string under a
        whole-arguments key is a document of its own."""
        out: dict[int, Callable[[str], str]] = {}
        for ev, piece in rows:
            if piece is None or ev.fragment is None:
                continue  # (an object's text is no string: default deny fills it as
            i = self._find(strings, ev.fragment, out)  # its document would)
            if i is not None:
                out[i] = _taking(piece)
        for i, s in enumerate(strings):
            if i not in out and s.key in self.policy.whole:
                out[i] = _taking(arguments(s.value))
        return out

    def _find(self, strings: Sequence[_Str], fragment: str,
              taken: dict[int, Callable[[str], str]]) -> int | None:
        kept = self.policy
        for where in (kept.fragment, kept.whole, None):
            for i, s in enumerate(strings):
                if i not in taken and s.value == fragment and (
                        s.key in where if where is not None else s.key not in kept.schema):
                    return i
        return None


def _taking(replacement: str) -> Callable[[str], str]:
    """A step that hands out ``replacement`` one character per character it is given."""
    chars = iter(replacement)
    return lambda _c: next(chars)


@dataclass
class _Str:
    start: int
    end: int
    path: tuple[Any, ...]
    value: str = ""
    """A string's decoded value."""

    @property
    def key(self) -> Any:
        """The key the value stands under directly (an int inside an array)."""
        return self.path[-1] if self.path else None


def _scan(text: str) -> tuple[list[_Str], list[_Str]]:
    """Value strings with their paths and decoded values, and bare words (numbers,
    literals, or junk in broken JSON) with theirs."""
    stack: list[list[Any]] = []  # [bracket, member key or index, expecting a key]
    strings: list[_Str] = []
    words: list[_Str] = []
    for m in _TOKEN.finditer(text):
        if m.start("s") >= 0:
            value = _decoded(m.group("s"))
            top = stack[-1] if stack else None
            if top is not None and top[0] == "{" and top[2]:
                top[1] = value  # a key: it names the member that follows
                continue
            strings.append(_Str(m.start("s"), m.end("s"), tuple(e[1] for e in stack), value))
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
            words.append(_Str(m.start(), m.end(), tuple(e[1] for e in stack)))
    return strings, words


def _decoded(wire: str) -> str:
    if "\\" not in wire:
        return wire  # no escape: the wire is the value
    try:  # the C decoder, for speed; what it refuses (a bad escape) unit by unit
        return _STRING.decode(f'"{wire}"')
    except ValueError:
        return "".join(_decode(u.group()) for u in _UNIT.finditer(wire))


def _number(word: str, path: tuple[Any, ...], kept: Policy) -> str:
    """A bare word's stand-in: structural numbers and JSON literals kept, other digits ``1``,
    anything else (junk in broken JSON) filler."""
    if word in _LITERALS:
        return word
    if _NUMBER.fullmatch(word):
        key = path[-1] if path else None
        if kept.structural(path) and isinstance(key, str) and key in kept.numbers:
            return word
        return re.sub(r"[0-9]", "1", word)  # never a leading zero: still a valid number
    return "".join(fill(c) for c in word)


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
        self._taken: set[str] = set()  # stand-ins given: one id, one stand-in

    # -- ids ------------------------------------------------------------------------
    def id(self, value: str) -> str:
        """The stand-in for an id: same length and character classes, prefix kept; never
        one another id already has (``call_0`` ... ``call_5`` stay six calls)."""
        if value in self._ids:
            return self._ids[value]
        m = _ID_PREFIX.match(value)
        keep = m.end() if m and m.end() < len(value) else 0
        shape = [_CLASSES.get(_class(c), c if c.isascii() else fill(c)) for c in value[keep:]]
        stream = self._stream(value)
        for _ in range(_DRAWS):
            result = value[:keep] + "".join(
                s if len(s) == 1 else s[next(stream) % len(s)] for s in shape)
            if result not in self._taken:
                break
        else:  # a small space (one digit, two letters) nearly full: the next free one
            result = _next_free(value[:keep], shape, result, self._taken)
        self._ids[value] = result
        self._taken.add(result)
        return result

    def _stream(self, value: str) -> Iterator[int]:
        counter = 0
        while True:
            seed = f"{counter}:{value}".encode("utf-8", "surrogateescape")  # bytes not UTF-8 too
            block = hmac.new(self.salt, seed, hashlib.sha256).digest()
            yield from block
            counter += 1

    # -- a data payload ---------------------------------------------------------------
    def data(self, text: str, turn: _Turn | None = None, event: str = sse.EVENT) -> str:
        """One frame's ``data``, redacted (``turn`` carries the capture's format and its
        calls' documents across frames; without one the frame is a capture of its own;
        ``event`` is the frame's event name). The first pass only reads it."""
        if turn is None:
            first = _Turn()
            self.data(text, first, event)
            turn = first.planned()
        head = text.lstrip()
        if head == "[DONE]" or not head:
            return text
        if turn.collecting:
            if head[0] in '{["':
                turn.rows(event, text)
            return text
        if head[0] not in '{["':
            return "".join(fill(c) for c in text)  # not JSON: all of it is data
        return self._json(text, turn, turn.rows(event, text))

    def _json(self, text: str, turn: _Turn, rows: list[tuple[Ev, str | None]] | None) -> str:
        """A JSON payload with every value redacted; ``rows``, the reader's reading of it,
        say which strings are argument text."""
        kept = turn.policy.reading(rows)
        strings, words = _scan(text)
        inner = {i for i, s in enumerate(strings) if len(s.path) == 1 and s.key in kept.wrapped}
        # A wrapped event's rows are the inner event's: they are matched inside it.
        steps = turn.steps(rows, strings) if rows is not None and not inner else {}
        out = list(text)  # one slot per character; each slot is rewritten at equal width
        for i, s in enumerate(strings):
            wire = text[s.start:s.end]
            step = steps.get(i)
            if step is not None:
                new = rewrite(wire, step)
            elif i in inner:
                new = self._wrapped(wire, turn, rows)
            else:
                new = self._value(wire, s, kept)
            if new != wire:
                out[s.start:s.end] = list(new)
        for w in words:
            out[w.start:w.end] = list(_number(text[w.start:w.end], w.path, kept))
        return "".join(out)

    def _value(self, wire: str, s: _Str, kept: Policy) -> str:
        path = s.path
        if len(path) == 1 and s.value in kept.names:
            return wire
        key = _key_of(path)
        known = kept.structural(path) and isinstance(path[-1] if path else None, str)
        if known and key in kept.schema:
            return wire
        if known and key in kept.ids:
            chars = iter(self.id(_decoded(wire)))
            return rewrite(wire, lambda c: next(chars))
        return rewrite(wire, fill)

    def _wrapped(self, wire: str, turn: _Turn, rows: list[tuple[Ev, str | None]] | None
                 ) -> str:
        """A base64 inner event (``Envelope.wrapped``): redacted, with the reader's rows of
        it, and wrapped again (same length in, same length out); anything else is filler."""
        try:
            inner = base64.b64decode(wire, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return rewrite(wire, fill)
        head = inner.lstrip()
        redacted = (self._json(inner, turn, rows) if head[:1] in ("{", "[")
                    else self.data(inner, turn))
        out = base64.b64encode(redacted.encode("utf-8")).decode("ascii")
        return out if len(out) == len(wire) else rewrite(wire, fill)

    # -- a whole capture ----------------------------------------------------------------
    def capture(self, body: bytes, source: str = "<bytes>", *, ndjson: bool = False) -> bytes:
        """The capture with every value redacted; same length, same line layout.

        Its framing is the one ``load()`` reads it in (:func:`~.framing.framing_of`, one
        detection for both): type-prefixed lines (the AI SDK 4 data stream), a streamed
        JSON array (Gemini without ``?alt=sse``), NDJSON (Ollama), AWS event-stream or SSE,
        each re-framed by its own ``FRAMING.rewrite``. ``ndjson`` is kept for callers that
        passed it: the bytes decide, as they do for ``load()``. Raises :class:`Refused` for
        bytes it cannot read so (see the module docstring): never handed back unread.
        """
        if not body:
            raise Refused(source, 0, "empty file: nothing to redact")
        framing = framing_of(body)
        first = _Turn()
        try:  # the first pass reads the format and every call's arguments; writes nothing
            framing.rewrite(body, source, _Values(self, first))
            return framing.rewrite(body, source, _Values(self, first.planned()))
        except CaptureError as e:
            raise Refused(e.source, e.offset, e.reason) from None

    def _headers(self, raw: bytes, kept: frozenset[str]) -> bytes:
        """Every header value replaced but those the format names (``Envelope.headers``:
        the event type, message type...): a string's characters filler, a byte array's
        bytes ``x``, an integer or timestamp 1, a UUID a consistent stand-in. A boolean's
        value is its type byte, kept like JSON's ``true``/``false``."""
        out = bytearray(raw)
        i = 0
        while i < len(raw):
            name = raw[i + 1 : i + 1 + raw[i]].decode("utf-8")
            i += 1 + raw[i]
            kind = raw[i]
            i += 1
            if kind in (6, 7):
                size = int.from_bytes(raw[i : i + 2])
                i += 2
            elif kind in _HEADER_SIZES:
                size = _HEADER_SIZES[kind]
            elif kind in (0, 1):
                continue
            else:
                raise ValueError(f"unknown header value type {kind}")
            value = raw[i : i + size]
            if len(value) < size:
                raise ValueError("header value cut short")
            if name not in kept:
                out[i : i + size] = self._header_value(kind, value)
            i += size
        return bytes(out)

    def _header_value(self, kind: int, value: bytes) -> bytes:
        if kind == 7:
            text = value.decode("utf-8", "surrogateescape")
            return "".join(map(fill, text)).encode("utf-8", "surrogateescape")
        if kind == 6:
            return b"x" * len(value)
        if kind == 9:
            return hmac.new(self.salt, b"uuid:" + value, hashlib.sha256).digest()[:16]
        return (1).to_bytes(len(value))  # byte, short, int, long, timestamp


_CLASSES = {"a": "abcdefghijklmnopqrstuvwxyz", "A": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "0": "0123456789"}
_DRAWS = 32  # stand-ins drawn before a nearly full space is walked in order


def _class(c: str) -> str:
    return "a" if "a" <= c <= "z" else "A" if "A" <= c <= "Z" else "0" if "0" <= c <= "9" else c


def _next_free(prefix: str, shape: Sequence[str], start: str, taken: set[str]) -> str:
    """The first stand-in of ``shape`` not ``taken``, counting on from ``start`` (an odometer
    over the letter and digit places); ``start`` when every one is taken (ids that differ
    only in characters kept as filler cannot be told apart at their length)."""
    places = [i for i, s in enumerate(shape) if len(s) > 1]
    digits = [shape[i].index(start[len(prefix) + i]) for i in places]
    size = 1
    for i in places:
        size *= len(shape[i])
    out = list(start[len(prefix):])
    for _ in range(size):
        for n in reversed(range(len(places))):  # add one, carrying
            digits[n] = (digits[n] + 1) % len(shape[places[n]])
            if digits[n]:
                break
        for n, i in enumerate(places):
            out[i] = shape[i][digits[n]]
        candidate = prefix + "".join(out)
        if candidate not in taken:
            return candidate
    return start

@dataclass(frozen=True)
class _Values:
    """What a framing's rewriter asks for (:class:`~.framing.Values`), answered by this
    redactor for one pass over one capture."""

    redactor: Redactor
    turn: _Turn

    def data(self, text: str, event: str) -> str:
        return self.redactor.data(text, self.turn, event)

    def filler(self, text: str) -> str:
        return "".join(map(fill, text))

    def comment(self, text: str) -> str:
        return text if text.strip() in KEPT_COMMENTS else self.filler(text)

    def ident(self, text: str) -> str:
        return self.redactor.id(text)

    def headers(self, raw: bytes) -> bytes:
        try:
            return self.redactor._headers(raw, self.turn.policy.headers)
        except (IndexError, UnicodeDecodeError, ValueError):
            return b"x" * len(raw)  # headers that cannot be read: none of their bytes kept


class Refused(ValueError):
    """Bytes redaction cannot read as an event stream: nothing is written for them."""

    def __init__(self, source: str, offset: int, reason: str) -> None:
        super().__init__(f"{source}: byte {offset}: refusing to redact: {reason}")
        self.source, self.offset, self.reason = source, offset, reason










# -- files --------------------------------------------------------------------------
def _tagged(dst: Path, src: Path) -> Path:
    """``dst`` with ``src``'s :func:`~.sources.path_tag` before its suffix."""
    return dst.with_name(f"{dst.name.removesuffix(dst.suffix)}-{path_tag(src)}{dst.suffix}")


def redact_bytes(body: bytes, *, salt: str | bytes | None = None) -> bytes:
    """One capture's bytes, redacted (see the module docstring for what is kept)."""
    return Redactor(salt).capture(body)


def redact_file(
    src: str | PathLike[str], dst: str | PathLike[str], *, redactor: Redactor | None = None,
    secrets: Iterable[str] = (),
) -> Path:
    """Write the redacted capture to ``dst``; its timing sidecar is copied byte for byte
    (it holds nothing but times and sizes, once read as such), its provenance never.

    ``secrets``: credentials the user knows of. What redaction keeps (model, object keys,
    event names, ids' shapes...) is searched for them by :mod:`.echoes`, in every form it
    knows: each contiguous spelling is replaced by as many ``x``, and a file in which one
    still shows (split across frames) is refused.

    Raises :class:`Refused` (and writes nothing) for a file it cannot read as a capture,
    whose timing sidecar is not one (it could hold anything), or that keeps a secret.
    """
    src, dst = Path(src), Path(dst)
    if src.resolve() == dst.resolve():
        raise ValueError(f"refusing to redact {src} in place")
    why = entry_problem(src)
    if why is not None:
        raise Refused(str(src), 0, why)
    try:
        body = src.read_bytes()
    except OSError as e:
        raise Refused(str(src), 0, f"cannot be read: {e.strerror or e}") from None
    redacted = (redactor or Redactor()).capture(body, str(src),
                                                 ndjson=src.suffix.lower() == ".ndjson")
    secrets = list(secrets)
    if secrets:
        redacted, _ = echoes.scrub(redacted, secrets)
        form = echoes.find(redacted, secrets)
        if form is not None:
            raise Refused(str(src), 0, f"a known secret remains after redaction ({form})")
    try:
        timing.read(src)
    except CaptureError as e:
        raise Refused(e.source, e.offset, e.reason) from None
    dst.parent.mkdir(parents=True, exist_ok=True)
    part = in_progress(dst)
    part.write_bytes(redacted)
    side = timing.sidecar(src)
    if side.exists():
        shutil.copyfile(side, timing.sidecar(dst))
    part.replace(dst)  # last: a capture under its own name is a whole one
    return dst


def redact_paths(
    paths: Iterable[str | PathLike[str]],
    out_dir: str | PathLike[str],
    *,
    salt: str | bytes | None = None,
    progress: bool | None = None,
    refused: list[Refused] | None = None,
    secrets: Iterable[str] = (),
) -> list[Path]:
    """Redact files and directories of captures into ``out_dir``, one id mapping for all.

    A directory's captures (``.sse``, ``.eventstream``) keep their paths relative to it.
    Inputs that would share an output (``a/turn.sse`` and ``b/turn.sse``) each get a tag
    from their full path (``turn-1f2e3d4c.sse``), as ``import`` tags recordings of the same
    name; a file named twice is redacted once. ``refused``: a list that collects each file
    redaction refuses (nothing is written for it) while the rest go on; without one the
    first refusal raises. ``progress``: a progress bar (``None``: only on a terminal).
    ``secrets``: see :func:`redact_file`.
    """
    secrets = list(secrets)
    out_dir = Path(out_dir)
    jobs: list[tuple[Path, Path]] = []
    for p in map(Path, paths):
        if p.is_dir():
            jobs += [(f, out_dir / f.relative_to(p)) for f in sorted(p.rglob("*"))
                     if f.suffix in (*CAPTURE_SUFFIXES, ".ndjson")]
        else:
            jobs.append((p, out_dir / p.name))
    jobs = list({src.resolve(): (src, dst) for src, dst in reversed(jobs)}.values())[::-1]
    shared = Counter(dst for _, dst in jobs)
    jobs = [(src, _tagged(dst, src) if shared[dst] > 1 else dst) for src, dst in jobs]
    redactor = Redactor(salt)
    return over_files(lambda job: redact_file(*job, redactor=redactor, secrets=secrets), jobs,
                      desc="redact", progress=progress, catch=Refused, failures=refused)
