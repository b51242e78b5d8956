"""The normalised event every wire format gives, and the checks its fields pass.

A layer below the formats: ``providers/*`` build :class:`Ev` rows with the helpers here,
``_fastpath.py`` and ``decode.py`` read them. Nothing here knows a format.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import compress
from typing import Annotated, Any, Literal, NamedTuple, TypeVar, get_args

import msgspec

Kind = Literal[
    "text_start",
    "text_delta",
    "call_start",
    "args_delta",
    "args_done",
    "block_stop",
    "turn_stop",
    "other",
    "error",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
"""Every ``kind``, in the order of the column's categories."""


PROVIDER_ERROR = "provider error:"
"""How the ``problem`` of an error the provider sent begins (its own error event, read fine;
every other error row is a problem in the bytes)."""


class Ev(NamedTuple):
    """One normalised event; a frame yields one or more, in wire order."""

    event: str
    kind: Kind
    block: int | None = None
    call_id: str | None = None
    tool: str | None = None
    fragment: str | None = None
    wire_chars: int | None = None
    final: str | None = None
    problem: str | None = None
    choice: int | None = None
    """Chat and Gemini: which of the ``n`` choices (``choices[].index``) or candidates
    (``candidates[].index``) the row belongs to."""
    reason: str | None = None
    """On a row that ends a message or turn: why, as the wire says it (``finish_reason``,
    ``stop_reason``, ``finishReason``, a response's ``status``)."""
    quirk: str | None = None
    """What a reader noticed a producer do on this row that the format's documentation does
    not (``blank_identity: id ""``): the quirk's name, a colon, the evidence."""

    @classmethod
    def provider_error(cls, event: str, message: object, code: object = None) -> Ev:
        """The row of an error the provider sent: ``provider error: [code: ]message``."""
        said = f"{code}: {message}" if code is not None else message
        return cls(event, "error", problem=f"{PROVIDER_ERROR} {said}")


IDENTITY_CHANGED = "identity_changed"
"""How a row that says a call's id or name changed begins (``providers._identity``)."""


def conflict(evs: list[Ev] | tuple[Ev, ...]) -> str | None:
    """The problem of a frame's rows that strict mode raises on (a call's identity changed:
    always the frame's last row), or None. Cheap: most frames end with no error."""
    if evs and evs[-1].kind == "error":
        problem = evs[-1].problem
        if problem is not None and problem.startswith(IDENTITY_CHANGED):
            return problem
    return None


_new = tuple.__new__


def fragment_row(event: str, kind: Kind, block: int | None, fragment: str | None,
                 wire_chars: int | None, choice: int | None = None,
                 call_id: str | None = None, tool: str | None = None) -> Ev:
    """An :class:`Ev` for a text or argument fragment (most rows of a stream), built
    without NamedTuple's keyword handling."""
    return _new(Ev, (event, kind, block, call_id, tool, fragment, wire_chars, None, None, choice,
                     None, None))


def error_message(payload: Any) -> str:
    """What an error payload says: ``{"error": {"message": …}}``, ``{"error": …}``,
    ``{"message": …}`` or the value itself, cut to 300 characters."""
    err = payload.get("error", payload) if isinstance(payload, dict) else payload
    msg = err.get("message", err) if isinstance(err, dict) else err
    return str(msg)[:300]


DONE = object()
"""Stands for a ``data: [DONE]`` payload, which is not JSON."""
DONE_ROWS = (Ev("[DONE]", "turn_stop"),)
"""What ``data: [DONE]`` means in every format: the end of the stream."""


DONE_RAW = b"[DONE]"
"""A data line that is the ``[DONE]`` sentinel (compared, never hashed: a hash reads it all)."""


def is_done(data: str | bytes) -> bool:
    """The one test for the ``[DONE]`` sentinel, on a frame's data as text or bytes."""
    return data == "[DONE]" or data == DONE_RAW


PAYLOAD_ERRORS = (KeyError, TypeError, AttributeError, IndexError)
"""What ``normalize`` raises for a payload of an unexpected shape (the reader reports it)."""


# -- field checks: anything of the wrong type is reported, never coerced ------------------------
def text(value: Any, field: str) -> str:
    """A field that must be a string."""
    if type(value) is str:
        return value
    raise TypeError(f"{field} should be a string, not {type(value).__name__}")


def stated(value: Any) -> str | None:
    """A stop reason as the wire states it: a string as is, anything else as its JSON text
    (never a problem: a reason only annotates the row that carries it)."""
    if value is None or type(value) is str:
        return value
    return json.dumps(value, ensure_ascii=False, default=str)[:100]


def stated_status(holder: Any, *why: tuple[str, str]) -> str | None:
    """A finished run or response's ``status``, as ``status: why`` where ``holder`` says why:
    each of ``why`` is a (field, key) pair naming an object and its string (the last one
    holding a string wins); None when ``holder`` is no object."""
    if not isinstance(holder, dict):
        return None
    status = stated(holder.get("status"))
    said = None
    for field, key in why:
        details = holder.get(field)
        if isinstance(details, dict) and isinstance(details.get(key), str):
            said = details[key]
    return f"{status}: {said}" if status and said else status


def maybe_text(value: Any, field: str) -> str | None:
    return None if value is None else text(value, field)


def obj(value: Any, field: str) -> dict[str, Any]:
    """A field that must be a JSON object (``"text" in "some text"`` would not fail)."""
    if type(value) is dict:
        return value
    raise TypeError(f"{field} should be an object, not {type(value).__name__}")


def ws_message(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload``, unless it is the line the proxy writes for a WebSocket message it could
    not keep (``{"source", "time", "problem", "bytes"}``, :mod:`~streamcalls_lab.traffic.
    websocket`): that is reported (its ``problem``), never read as a message of the session."""
    if "problem" in payload and "source" in payload and "message" not in payload:
        raise TypeError(f"a {text(payload['source'], 'source')} WebSocket message not kept: "
                        f"{text(payload['problem'], 'problem')}")
    return payload


def array(value: Any, field: str) -> list[Any]:
    """A field that must be a JSON array."""
    if type(value) is list:
        return value
    raise TypeError(f"{field} should be a list, not {type(value).__name__}")


INT64 = range(-(2**63), 2**63)
"""What the Int64 ``block`` column holds: ``block in INT64`` is one C-level check."""


def index(value: Any, field: str) -> int:
    """A block index: an integer (``True`` and ``"0"`` are not) that fits the Int64 column."""
    if type(value) is int:
        if value in INT64:
            return value
        raise TypeError(f"{field} should fit in 64 bits, not be {value}")
    raise TypeError(f"{field} should be an integer, not {type(value).__name__}")


Index = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""A block index as a typed payload field: an integer that orjson also reads as one."""


class Hot(NamedTuple):
    """A format's frames that need no state, as the fast path (``_fastpath.py``) reads them.

    ``decode`` is a msgspec decoder of a struct that forbids unknown fields (so every byte
    is parsed, as orjson would). ``rows(at, structs, events, raws, out, cols)`` reads each
    frame ``i`` in ``at`` whose struct is not None: its rows go into ``cols`` (a
    :class:`HotRows`, in frame order) with ``out[i]`` set to :data:`HOT`, or, for a row with
    fields ``cols`` does not hold, into ``out[i]`` as a tuple of :class:`Ev`; or it leaves
    ``out[i]`` None (``normalize`` then reads the frame). Every row is built from the same
    tables ``normalize`` uses. One call per capture: a call per frame would cost more than
    the rows.
    """

    decode: Callable[[bytes], Any]
    rows: Callable[[list[int], list[Any], list[str], list[bytes], list[Any], HotRows], None]
    event: Callable[[str], bool] | None = None
    """Which frames to try, by event name; None tries every frame."""


HOT = ()
"""``out[i]`` of a frame whose rows a ``Hot.rows`` put in its :class:`HotRows`. (An empty
tuple: a frame without rows of its own; its rows are in the columns.)"""


class HotRows:
    """The hot frames' rows as columns, one list per field, in frame order: no tuple per row
    (the fields an :class:`Ev` of a hot row may hold; the others are None)."""

    FIELDS = ("event", "kind", "block", "fragment", "wire_chars", "choice")
    __slots__ = ("frame", *FIELDS)

    def __init__(self) -> None:
        self.frame: list[int] = []  # each row's frame, a frame of two rows twice
        self.event: list[str] = []
        self.kind: list[Kind] = []
        self.block: list[int | None] = []
        self.fragment: list[str | None] = []
        self.wire_chars: list[int | None] = []
        self.choice: list[int | None] = []

    def appenders(self) -> tuple[Callable[[Any], None], ...]:
        """Each list's ``append``, in :attr:`__slots__` order: what a ``Hot.rows`` loop calls.
        (Written out: a generator over the names cost more than a capture's short loop.)"""
        return (self.frame.append, self.event.append, self.kind.append, self.block.append,
                self.fragment.append, self.wire_chars.append, self.choice.append)

    def extend(self, other: HotRows) -> None:
        """``other``'s rows after these, every column but ``frame`` (whose numbers the
        caller counts on its own). Written out, as :meth:`appenders`: a loop over the
        names cost more than the extends, once a capture."""
        self.event += other.event
        self.kind += other.kind
        self.block += other.block
        self.fragment += other.fragment
        self.wire_chars += other.wire_chars
        self.choice += other.choice

    def evs(self) -> Iterator[tuple[int, Ev]]:
        """``(frame, row)`` of every row, as :class:`Ev`: the rows ``normalize`` gives."""
        for i, event, kind, block, frag, wire, choice in zip(
                self.frame, self.event, self.kind, self.block, self.fragment, self.wire_chars,
                self.choice, strict=True):
            yield i, fragment_row(event, kind, block, frag, wire, choice)


S = TypeVar("S")


def decoded(at: list[int], structs: list[S | None]) -> Iterator[tuple[int, S]]:
    """``(i, struct)`` for each frame ``i`` of ``at`` whose struct decoded: what a
    ``Hot.rows`` walks. The frames that did not decode are skipped in C (a struct is
    always true), so no Python code runs for them."""
    return compress(zip(at, structs, strict=True), structs)
