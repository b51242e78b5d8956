"""The correct accumulator: concatenate, key by (choice, block), finish only on the stop event.

It consumes the normalised events of :func:`streamcalls_lab.load` (mappings
with at least ``kind``, ``block``, ``call_id``, ``tool``, ``fragment``), so one
class serves every wire format. Each decision lives in its own small method;
a fault variant in :mod:`streamcalls_lab.faults` overrides exactly one.

``feed_bytes(chunk)`` is the same handler one layer down: socket reads go through
the incremental SSE decoder and the provider normaliser (:class:`EventDecoder`),
which hold a split character or line until the rest arrives.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from . import _deepjson as deepjson

if TYPE_CHECKING:
    import pandas as pd

    from .decode import Decoded, EventDecoder


def present(value: Any) -> Any:
    """A value with NaN / NA (how dataframes spell 'missing') turned into None."""
    if value is None or value is _NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _get(event: Mapping[str, Any], key: str) -> Any:
    # present() inlined: every event field an accumulator reads comes through here
    value = event.get(key)
    if value is None or value is _NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


try:  # pandas is a dependency, but the accumulator itself should not need it
    from pandas import NA as _NA
except ImportError:  # pragma: no cover
    _NA = object()


class CallKey(NamedTuple):
    """Which call an event belongs to: its block within its choice.

    Each of a Chat response's ``n`` choices (and each Gemini candidate) numbers its calls
    from 0, so the block alone does not tell two choices' calls apart. Shown as the block,
    with the choice when there is more than the first.
    """

    choice: int | None
    block: int | None

    def __str__(self) -> str:
        return f"{self.block}" if not self.choice else f"{self.block} of choice {self.choice}"


@dataclass
class CallBuffer:
    """Everything known about one call so far."""

    block: int | None
    call_id: str | None
    tool: str | None
    parts: list[str] = field(default_factory=list)
    complete: bool = False
    final: str | None = None
    """The whole argument string, where the stream repeats it (Responses ``.done``)."""
    problems: list[str] = field(default_factory=list)
    wire_chars: int = 0
    """Escaped length on the wire, summed over the fragments (when events carry it)."""
    dispatched: tuple[str, Any] | None = None
    """``(args, value)`` as handed on before the stop arrived: only a faulty handler sets it."""
    choice: int | None = None
    """Which of the response's choices (or candidates) the call belongs to; None: the only one."""
    done_only: bool = False
    """No fragment came: the arguments are the done event's (``args_only_in_done``)."""

    @property
    def args(self) -> str:
        joined = "".join(self.parts)
        return self.final if self.done_only and not joined and self.final else joined

    @property
    def n_deltas(self) -> int:
        return sum(1 for p in self.parts if p)

    def handed_on(self) -> str:
        """The argument string a handler hands on: what it dispatched, else the buffer."""
        return self.args if self.dispatched is None else self.dispatched[0]

    def result(self) -> dict[str, Any]:
        """The call as ``finish()`` hands it on: raw args plus a strict parse."""
        if self.dispatched is not None:
            args, value = self.dispatched
            error = None
        else:
            args = self.args
            if not args.strip():  # no argument text at all: a call that takes none
                value, error = {}, None
            else:
                try:
                    value, error = deepjson.loads(args), None
                except ValueError as e:
                    value, error = None, str(e)
        return {
            "block": self.block,
            "choice": self.choice,
            "call_id": self.call_id,
            "tool": self.tool,
            "args": args,
            "input": value,
            "error": error,
        }


@dataclass(frozen=True)
class Snapshot:
    """What a handler holds after some events: plain values, safe to keep and compare."""

    buffers: dict[Hashable, str]
    """Each key's current argument buffer (a :class:`CallKey`, for the correct handler)."""
    message: str
    """The message surface."""
    finished: tuple[dict[str, Any], ...]
    """What ``finish()`` would hand on now: ``block``, ``choice``, ``call_id``, ``tool``,
    ``args``."""
    events: int
    """Events fed so far."""


def take_identity(buf: CallBuffer, event: Mapping[str, Any]) -> None:
    """An event's id and name for ``buf``'s call: each fills what is still missing; one that
    differs from what the call has is kept out and named in its problems."""
    for part, said in (("call_id", "id"), ("tool", "name")):
        value = _get(event, part)
        if not value:
            continue  # empty or null: no id, no name (blank_identity)
        had = getattr(buf, part)
        if not had:
            setattr(buf, part, value)
        elif value != had:
            buf.problems.append(f"identity_changed: {said} {had!r} then {value!r} "
                                f"on {_get(event, 'event') or 'a later event'} (the call "
                                "keeps the first)")


def _buffer(event: Mapping[str, Any]) -> CallBuffer:
    """A new, empty buffer for the call an event names."""
    return CallBuffer(_get(event, "block"), _get(event, "call_id"), _get(event, "tool"),
                      choice=_get(event, "choice"))


def event_dict(decoded: Decoded) -> dict[str, Any]:
    """A decoded event as the mapping ``feed`` takes (the ``load()`` columns it needs)."""
    ev = decoded.ev
    return {
        "provider": decoded.provider, "event": ev.event, "kind": ev.kind, "block": ev.block,
        "choice": ev.choice,
        "call_id": ev.call_id, "tool": ev.tool, "fragment": ev.fragment,
        "wire_chars": ev.wire_chars, "final": ev.final, "problem": ev.problem,
        "reason": ev.reason, "offset": decoded.frame.offset, "frame": decoded.n,
    }


class ByteDecoder(Protocol):
    """What the byte layer does: socket reads in, the events each completes out."""

    def feed(self, chunk: bytes, t: float = ...) -> list[Decoded]: ...

    def close(self) -> list[Decoded]: ...


def byte_decoder() -> EventDecoder:
    """The byte layer every handler reads bytes through (``feed_bytes``)."""
    from .decode import EventDecoder  # the byte layer, only when bytes are fed

    # Lenient: a bad or cut-off frame becomes an error event, never an exception,
    # so a truncated stream still ends in finish() with its cut-off call held back.
    return EventDecoder(strict=False)


class Accumulator:
    """The correct handler for one turn: ``feed(event)`` each event, then ``finish()``."""

    def __init__(self) -> None:
        self.by_key: dict[Hashable, CallBuffer] = {}
        """The current buffer for each key; a re-used key starts a new call."""
        self.calls: list[CallBuffer] = []
        """Every call in announcement order, finished or not."""
        self.texts: dict[int | None, list[str]] = {}
        """The text deltas, by choice (each of ``n`` choices is its own message)."""
        self.stopped = False
        self.said: dict[int | None, str] = {}
        """The stop reason each choice's message ended with, as the wire said it (a turn's
        own end, Responses' status, is not a message's)."""
        self.problems: list[str] = []
        self.events_seen = 0
        self._decoder: ByteDecoder | None = None

    # -- the interface every handler has ---------------------------------------
    def feed(self, event: Mapping[str, Any]) -> None:
        self.events_seen += 1
        kind = event["kind"]
        if kind == "call_start":
            self.start_call(event)
        elif kind == "args_delta":
            fragment = _get(event, "fragment")
            if fragment is not None:
                buf = self.buffer_for(event)
                self.identify(buf, event)
                self.add_fragment(buf, fragment)
                buf.wire_chars += _get(event, "wire_chars") or 0
                self.after_fragment(buf)
        elif kind == "text_delta":
            self.add_text(_get(event, "fragment") or "", _get(event, "choice"))
        elif kind in ("block_stop", "args_done"):
            self.stop(event)
        elif kind == "turn_stop":
            self.stopped = True
        if kind != "turn_stop" and (reason := _get(event, "reason")) is not None:
            self.said[_get(event, "choice")] = reason

    def finish(self) -> list[dict[str, Any]]:
        """Only calls whose stop event arrived; a cut-off call is never handed on."""
        for event in self.close_bytes():
            self.feed(event)
        return [buf.result() for buf in self.calls if self.is_finished(buf)]

    # -- the byte-level entry ----------------------------------------------------
    def feed_bytes(self, chunk: bytes) -> None:
        """One socket read of the raw body, in any chunking; ``finish()`` ends the stream."""
        for event in self.events_from_bytes(chunk):
            self.feed(event)

    def events_from_bytes(self, chunk: bytes) -> list[dict[str, Any]]:
        """The events one read completes (``feed_bytes`` without the feeding)."""
        if self._decoder is None:
            self._decoder = byte_decoder()
        return [event_dict(d) for d in self._decoder.feed(self.read(chunk))]

    def use_decoder(self, decoder: ByteDecoder) -> None:
        """Read bytes through ``decoder`` (a :func:`byte_decoder` or a stand-in with its
        ``feed`` and ``close``): the breaker hands every handler one shared run of it."""
        self._decoder = decoder

    def close_bytes(self) -> list[dict[str, Any]]:
        """The events the end of the byte stream releases (none when fed events)."""
        if self._decoder is None:
            return []
        decoder, self._decoder = self._decoder, None
        return [event_dict(d) for d in decoder.close()]

    # -- one decision each: what a fault variant overrides ---------------------
    def key(self, event: Mapping[str, Any]) -> Hashable:
        """Which buffer an event belongs to: its block within its choice, never the tool
        name or the id (only the announcement carries those)."""
        return CallKey(_get(event, "choice"), _get(event, "block"))

    def start_call(self, event: Mapping[str, Any]) -> None:
        buf = _buffer(event)
        self.by_key[self.key(event)] = buf
        self.calls.append(buf)

    def buffer_for(self, event: Mapping[str, Any]) -> CallBuffer:
        key = self.key(event)
        buf = self.by_key.get(key)
        if buf is None:
            # A fragment for a call never announced: keep it, and say so.
            buf = _buffer(event)
            buf.problems.append("argument fragment for a call that was never announced")
            self.by_key[key] = buf
            self.calls.append(buf)
        return buf

    def identify(self, buf: CallBuffer, event: Mapping[str, Any]) -> None:
        """An id or name a fragment sends: the first non-empty value is the call's, wherever
        it comes (a name after the id); one repeated or blank names nothing new; a
        different one changes nothing and is a problem."""
        take_identity(buf, event)

    def add_fragment(self, buf: CallBuffer, fragment: str) -> None:
        """Append the fragment exactly as sent: no trim, no decode, no parse."""
        buf.parts.append(fragment)

    def after_fragment(self, buf: CallBuffer) -> None:
        """Nothing: a fragment never says anything about completion."""

    def add_text(self, fragment: str, choice: int | None = None) -> None:
        parts = self.texts.get(choice)
        if parts is None:
            parts = self.texts[choice] = []
        parts.append(fragment)

    def stop(self, event: Mapping[str, Any]) -> None:
        """The stop (or done) event is the only statement that a call is complete."""
        if _get(event, "block") is None:
            # Chat's finish_reason ends its choice's message: every call of that choice
            # still open is done, including one whose key a later call took over. The
            # other choices go on (a stop naming no choice ends them all).
            choice = _get(event, "choice")
            targets = [buf for buf in self.calls if not buf.complete
                       and (choice is None or buf.choice == choice)]
        else:
            buf = self.by_key.get(self.key(event))
            targets = [buf] if buf is not None else []
        final = _get(event, "final")
        for buf in targets:
            take_identity(buf, event)  # a done event repeats (or first gives) the identity
            buf.complete = True
            if final is not None:
                buf.final = final
                if not buf.n_deltas and final:
                    self.from_done(buf)
                elif final != buf.args:
                    buf.problems.append("the done event's arguments differ from the fragments")

    def from_done(self, buf: CallBuffer) -> None:
        """No fragment came, and the done event repeats the arguments: they are the call's
        (a producer that sends them only there: litellm#27144)."""
        buf.done_only = True

    def is_finished(self, buf: CallBuffer) -> bool:
        return buf.complete

    def read(self, chunk: bytes) -> bytes:
        """A socket read goes to the SSE decoder as bytes: it holds a split character."""
        return chunk

    # -- views ------------------------------------------------------------------
    @property
    def message(self) -> str:
        """The message surface: text deltas only, never argument fragments; with ``n``
        choices, each choice's message after the one before (never interleaved)."""
        return "".join(part for parts in self.texts.values() for part in parts)

    def buffers(self) -> dict[Hashable, str]:
        """Each key's current argument buffer, keyed as this handler keys them."""
        return {key: buf.args for key, buf in self.by_key.items()}

    def snapshot(self) -> Snapshot:
        """The state now, as plain values (the stepper keeps one per event)."""
        finished = tuple(
            {"block": buf.block, "choice": buf.choice, "call_id": buf.call_id,
             "tool": buf.tool, "args": buf.handed_on()}
            for buf in self.calls if self.is_finished(buf)
        )
        return Snapshot(self.buffers(), self.message, finished, self.events_seen)


FED = ["kind", "block", "call_id", "tool", "fragment", "final"]
"""The columns of a ``load()`` table the correct handler reads for a turn's calls."""


def turn_records(table: pd.DataFrame, columns: Sequence[str] = FED
                 ) -> Iterator[tuple[Any, Any, list[dict[str, Any]]]]:
    """Each turn of a ``load()`` table as ``(turn, provider, rows)``: turns in table order
    (as ``groupby(["turn", "provider"], sort=False)`` gives them, a row with either missing
    left out), its rows in table order as the mappings a handler is fed (``columns`` of it).

    The table is turned into mappings once, not once per turn: a ``to_dict`` call costs
    about what a hundred rows do, and a folder of captures has thousands of turns."""
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    records = table[list(columns)].to_dict("records")
    for turn, provider, record in zip(table["turn"].tolist(), table["provider"].tolist(),
                                      records, strict=True):
        if present(turn) is not None and present(provider) is not None:
            groups.setdefault((turn, provider), []).append(record)
    for (turn, provider), rows in groups.items():
        yield turn, provider, rows


def turn_calls(table: pd.DataFrame) -> Iterator[tuple[Any, Any, CallBuffer]]:
    """Each call of each turn of a ``load()`` table, finished or not, as the correct handler
    reads it: ``(turn, provider, buffer)``, turns in table order, calls in announcement order."""
    for turn, provider, events in turn_records(table):
        acc = Accumulator()
        for event in events:
            acc.feed(event)
        for buf in acc.calls:
            yield turn, provider, buf
