"""Whether a stream read as a known format was misread: one check, from the declarations.

Recognition takes only a format's own signatures (:mod:`.recognise`), yet a stream can still
be read as a format it is not: ``provider=`` given, or a stream of another protocol that
opens like one. Two signs, each read from what the formats declare, never from one format's
fields by name:

- most of its frames are foreign: they show none of the format's signature (its reader's
  ``sniff``, the same positive signature that recognises it), and either show another
  format's (Responses events read as Realtime ones, whose names they share) or the reader
  made nothing of them (every row ``other``) and they are not its keep-alive;
- such a frame holds a call in some format's terms that no row read: an object with a
  tool's name and its arguments or a call's id, in the keys the formats declare (the union
  of every format's ``Fields``: ``tool``, with ``fragment`` / ``whole`` or ``call_id``),
  while the reader read no call, or none by that call's id (by its tool's name, where it
  names no id): a frame of an unknown (future) type carrying a call after calls were read
  is lost too. A tool's result names no tool: it is no call; nor is a call in a frame of
  the format's own that its reader leaves to the server (a web search, an MCP approval).

Either is one problem at the end of the turn (strict: a ``CaptureError``), at the first frame
that shows it, naming what the stream looks like. The decoder feeds a :class:`Watch` each
frame it reads; the fast path asks :func:`suspect` of a whole capture, and gives it to the
decoder when the answer is yes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from ..events import Ev
from . import FORMATS, READERS, sniff
from .unknown import looks_like

CALL_KINDS = frozenset(("call_start", "args_delta", "args_done"))
"""The rows that say the reader read a call."""
_TOOL = frozenset(k for f in FORMATS.values() for k in f.fields.tool)
_ARGS = frozenset(k for f in FORMATS.values() for k in (*f.fields.fragment, *f.fields.whole))
_IDS = frozenset(k for f in FORMATS.values() for k in f.fields.call_id)
_MARK = re.compile(f'"(?:{"|".join(map(re.escape, sorted(_TOOL)))})"')
KEPT = 16
"""How many unread calls a :class:`Watch` keeps (the first is reported)."""
_MARK_BYTES = re.compile(_MARK.pattern.encode())
"""A data text can hold a call only if it names a tool's key (checked before parsing)."""


def call_part(payload: Any) -> str | None:
    """Where in ``payload`` an object shaped as a tool call is (``tool_calls[0].function``)
    and its tool's name: a tool named with its arguments or with a call's id, in the keys of
    any format (a result, which names no tool, is none); None when there is none."""
    found = find_call(payload)
    return None if found is None else found[0]


def find_call(payload: Any) -> tuple[str, str, str | None] | None:
    """The first object shaped as a tool call in ``payload`` (:func:`call_part`): where it
    is and its tool's name, described, its tool's name, and its call id (None where it
    names none). Walked with a stack of its own, depth first in order: no nesting is too
    deep for it."""
    stack: list[tuple[str, Any]] = [("", payload)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            tool = next((v for k, v in value.items()
                         if k in _TOOL and isinstance(v, str) and v), None)
            if tool is not None and (
                    any(value.get(k) is not None for k in _ARGS)
                    or any(isinstance(value.get(k), str) and value[k] for k in _IDS)):
                where = path if len(path) <= 80 else f"…{path[-60:]}"
                call_id = next((v for k, v in value.items()
                                if k in _IDS and isinstance(v, str) and v), None)
                return f"`{where or '(the payload)'}`, tool {tool[:40]!r}", tool, call_id
            inner = [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            inner = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed([(at, v) for at, v in inner if isinstance(v, dict | list)]))
    return None


@cache  # (stateless: one per format, not one per capture)
def foreigner(name: str) -> Callable[[str, Any, Sequence[Ev]], bool]:
    """Whether a frame read as ``name`` (its event, payload and rows) is of another
    protocol: it shows none of the format's signature (its reader's ``sniff``), and shows
    another format's, or the reader made nothing of it (every row ``other``) and it is not
    the format's keep-alive (``WireFormat.keepalive``) nor one of its own frames that are no
    signature (``WireFormat.own``)."""
    shows = READERS[name].sniff
    alive = FORMATS[name].keepalive
    own = FORMATS[name].own
    # The keep-alive exactly as the format sends it (Anthropic's ping) is never foreign when
    # no other format claims it: asked of every format once here, not again for each ping.
    idle = None if alive is None or sniff(alive.event, alive.payload) not in (None, name) \
        else (alive.event, alive.payload)

    def foreign(event: str, payload: Any, rows: Sequence[Ev]) -> bool:
        if idle is not None and event == idle[0] and payload == idle[1]:
            return False
        if shows(event, payload) or (own is not None and own(event, payload)):
            return False
        if sniff(event, payload) not in (None, name):
            return True  # another format's signature: foreign even where the reader read it
        for ev in rows:
            if ev.kind != "other":
                return False
        return alive is None or (event != alive.event and payload != alive.payload)

    return foreign


def _looks(event: str, payload: Any, name: str) -> str:
    """What a frame looks like, if not ``name``: another format the kit reads, or one of
    the lookalikes of formats it does not."""
    other = sniff(event, payload)
    if other is not None and other != name:
        return f"it looks like {other}: load it with provider={other!r}, or let it be detected"
    lookalike = looks_like(event, payload)
    if lookalike is not None:
        return f"it {lookalike.reason(event, payload)}"
    return "it may be a format this kit does not read"


class Watch:
    """What one turn read as ``name`` showed so far, frame by frame (``[DONE]`` and
    problem frames aside): how many frames, how many were foreign (the first kept), and the
    calls no row read (none at all, or none by their id)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._foreign = foreigner(name)
        self.frames = 0
        self.foreign = 0
        self.first_foreign: tuple[Any, int, str, Any] | None = None
        self.called = False  # a row read a call
        self._ids: set[str] = set()  # the call ids and the tools rows named
        self._tools: set[str] = set()
        self.calls: list[tuple[Any, int, str, Any, str, str, str | None]] = []
        """Foreign frames holding a call no row had read by then (at most :data:`KEPT`):
        each is judged at the end, as a summary may come before the call it repeats."""

    def see(self, at: Any, n: int, event: str, payload: Any, data: str,
            rows: Sequence[Ev]) -> None:
        """One frame the reader read (its number ``n``); ``at`` is handed back with a
        verdict about it."""
        self.frames += 1
        for ev in rows:
            if ev.kind in CALL_KINDS:
                self.called = True
            if ev.call_id is not None:
                self._ids.add(ev.call_id)
            if ev.tool is not None:
                self._tools.add(ev.tool)
        if not self._foreign(event, payload, rows):
            return
        self.foreign += 1
        if self.first_foreign is None:
            self.first_foreign = (at, n, event, payload)
        if len(self.calls) >= KEPT or not _MARK.search(data):
            return
        found = find_call(payload)
        if found is not None and not self._read(*found[1:]):
            self.calls.append((at, n, event, payload, *found))

    def _read(self, tool: str, call_id: str | None) -> bool:
        """Whether a row read this call: by its id, or by its tool where it names no id."""
        return call_id in self._ids if call_id is not None else tool in self._tools

    def verdict(self) -> tuple[Any, str] | None:
        """The frame to report and why, once the turn has ended; None when nothing says the
        turn was misread."""
        name = self.name
        if self.calls and not self.called:
            at, n, event, payload, where, _, _ = self.calls[0]
            return at, (f"read as {name}, but no call was read while frame {n} holds one "
                        f"({where}): {_looks(event, payload, name)}")
        for at, n, event, payload, where, tool, call_id in self.calls:
            if not self._read(tool, call_id):  # a call lost beside those read
                return at, (f"read as {name}, but frame {n} holds a call no row read "
                            f"({where}): {_looks(event, payload, name)}")
        if self.first_foreign is not None and 2 * self.foreign > self.frames:
            at, n, event, payload = self.first_foreign
            return at, (f"read as {name}, but {self.foreign} of its {self.frames} frames "
                        f"show nothing of {name} (the first: frame {n}, event {event!r}): "
                        f"{_looks(event, payload, name)}")
        return None


def holds_call(line: bytes, payload: Any) -> bool:
    """Whether a foreign frame's data (and its payload, parsed) holds a call, as a
    :class:`Watch` finds one."""
    return _MARK_BYTES.search(line) is not None and call_part(payload) is not None


def suspect(frames: int, foreigners: int, calls_shown: bool) -> bool:
    """Whether a :class:`Watch` of a whole capture may give a verdict: ``frames`` seen,
    ``foreigners`` of them foreign (:func:`foreigner`), and whether one of those
    :func:`holds_call` (whether a row read it by its id, the decoder's watch tells). The
    fast path then leaves the capture to the decoder, which says why (or reads it the
    same)."""
    return 2 * foreigners > frames or calls_shown
