"""One run of the byte layer over a turn's socket reads (the tape), replayed to every handler
that reads bytes as :class:`~.accumulate.Accumulator` does: the breaker and the stepper run
the correct handler and every fault over one turn, ``check_handler`` one handler over every
byte case.

A handler whose ``read`` changes the bytes gets its own decoder from the first read that
differs (and back on the tape once they agree again); one that replaces the byte layer
itself (``feed_bytes``, ``events_from_bytes``, ``use_decoder``, ``close_bytes``) reads
every byte itself.
"""

from __future__ import annotations

import copy
import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from itertools import accumulate
from types import MappingProxyType
from typing import Any

from .accumulate import Accumulator, byte_decoder, event_dict
from .decode import Decoded

# Every handler reads the same bytes through the same byte layer, so it is run once (the
# tape) and each handler gets a replay of it: the events, without a run of the decoder per
# handler over every socket read.
BYTE_LAYER = ("feed_bytes", "events_from_bytes", "use_decoder", "close_bytes")
"""What a handler that reads bytes its own way overrides: it gets no replay."""


class Tape:
    """The byte layer run once over a turn's reads: the events each read completed (kept
    for the reads that completed any: most of a 1-byte read's complete nothing), as the
    read-only mappings ``feed`` takes (not the decoded records too: ``check_handler`` keeps
    a tape per case, and those were half its memory).

    A copy of the decoder is kept every ``EVERY`` reads, so the next turn's tape (the same
    bytes up to the keystroke that changed it) decodes only from the copy before the first
    read that differs: what it would do again, it takes from this one.
    """

    EVERY = 1024

    def __init__(self, reads: Sequence[bytes], last: Tape | None = None) -> None:
        self.reads = tuple(reads)
        self.body = b"".join(self.reads)
        self.ends = {end: i for i, end in enumerate(accumulate(map(len, self.reads)))}
        start = 0 if last is None else _agree(last.reads, self.reads) // self.EVERY
        done = start * self.EVERY
        self.copies = [] if last is None else last.copies[:start]
        decoder = copy.deepcopy(self.copies[-1]) if start else byte_decoder()
        self.events: dict[int, list[Mapping[str, Any]]] = {}
        if last is not None:
            self.events = {i: es for i, es in last.events.items() if i < done}
        feed, n, every = decoder.feed, len(self.reads), self.EVERY
        for start in range(done, n, every):
            for i, chunk in enumerate(self.reads[start : start + every], start):
                ds = feed(chunk)
                if ds:
                    # as ``feed`` takes them, read-only since every handler is given them
                    self.events[i] = [MappingProxyType(event_dict(d)) for d in ds]
            if start + every <= n:
                self.copies.append(copy.deepcopy(decoder))
        self.closing = decoder.close()

    @classmethod
    def cut(cls, bytewise: Tape, at: int) -> Tape:
        """The tape of ``bytewise``'s body in two reads, cut at byte ``at``, taken from its
        tape in reads of one byte, not decoded again: the byte layer's events depend on the
        bytes consumed, not on how they were cut (``tests/test_decode.py``: every chunking
        gives the same events), so the first read completes what the bytes before ``at``
        complete one at a time, and the second the rest."""
        if len(bytewise.reads) != len(bytewise.body):
            raise ValueError("a tape is cut from the tape of its body in reads of one byte")
        out = cls.__new__(cls)
        out.body = body = bytewise.body
        out.reads = (body[:at], body[at:])
        out.ends = {at: 0, len(body): 1}
        out.copies = []
        out.closing = bytewise.closing
        reads = sorted(bytewise.events)  # the bytes that completed events, in order
        split = bisect_left(reads, at)
        halves = ([e for i in reads[:split] for e in bytewise.events[i]],
                  [e for i in reads[split:] for e in bytewise.events[i]])
        out.events = {i: events for i, events in enumerate(halves) if events}
        return out

    def span_events(self, reads: slice) -> list[Mapping[str, Any]]:
        get = self.events.get
        if reads.stop - reads.start == 1:
            return get(reads.start, [])
        return [e for i in range(reads.start, reads.stop) for e in get(i, ())]


def _agree(a: Sequence[bytes], b: Sequence[bytes]) -> int:
    """How many leading reads ``a`` and ``b`` have in common (compared in C, halving)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


LAST: list[Tape] = []  # the last turn's tape: a refresh reuses it up to where they differ


def tape(reads: Sequence[bytes]) -> Tape:
    tape = Tape(reads, LAST[0] if LAST else None)
    LAST[:] = [tape]
    return tape


class Replay:
    """One handler's byte layer: the tape's events while the bytes it reads are the tape's,
    read for read; its own decoder, caught up on the bytes so far, where they are not (a
    read that changes or holds back bytes), back on the tape once they agree again."""

    def __init__(self, tape: Tape, at_end: bool = False) -> None:
        self.tape = tape
        self.at = len(tape.reads) if at_end else 0  # reads of the tape consumed
        self.pos = len(tape.body) if at_end else 0  # bytes consumed
        self.own: Any = None
        self.same = True  # every byte consumed so far is the tape's
        self._upto: int | None = None

    def feed(self, chunk: bytes, t: float = math.nan) -> list[Decoded]:
        """A read as the decoder's records (``read_all`` asks for :meth:`events`; a handler
        that asks the decoder itself gets a decoder of its own from here on, its time
        ``t`` kept)."""
        self.same = False  # never back on the tape: its records are not kept
        out = self._own().feed(chunk, t)
        self.pos += len(chunk)
        return out

    def events(self, chunk: bytes) -> Sequence[Mapping[str, Any]]:
        """What ``events_from_bytes`` gives for a read already through ``read``."""
        if not isinstance(chunk, bytes | bytearray | memoryview):  # (a handler's own read)
            return [event_dict(d) for d in self.feed(chunk)]  # its decoder says what is wrong
        at, tape = self.at, self.tape
        if self.own is None and at < len(tape.reads) and chunk == tape.reads[at]:
            self.at, self.pos = at + 1, self.pos + len(chunk)  # the tape's next read itself
            return tape.events.get(at, ())
        taped = self._taped(chunk)
        if taped is not None:
            return self.tape.span_events(taped)
        return [event_dict(d) for d in self._read_own(chunk, math.nan)]

    def _taped(self, chunk: bytes) -> slice | None:
        """The tape's reads this chunk is, when it is the tape's bytes up to a read's end
        (and consumes them); None when the handler's own decoder must read it."""
        if not chunk:
            return slice(0, 0)
        tape, end = self.tape, self.pos + len(chunk)
        self.same = self.same and tape.body.startswith(chunk, self.pos)
        upto = tape.ends.get(end) if self.same else None
        if self.own is None and upto is not None:
            taped = slice(self.at, upto + 1)
            self.at, self.pos = upto + 1, end
            return taped
        self._upto = upto
        return None

    def _read_own(self, chunk: bytes, t: float) -> list[Decoded]:
        out = self._own().feed(chunk, t)
        self.pos += len(chunk)
        if self._upto is not None:  # the same bytes up to a read's end: the tape's state
            self.own, self.at = None, self._upto + 1
        return out

    def close(self) -> list[Decoded]:
        if self.own is None and self.pos == len(self.tape.body):
            return self.tape.closing
        return self._own().close()

    def _own(self) -> Any:
        if self.own is None:
            # The decoder's state depends on the bytes consumed, not on how they were cut.
            self.own = byte_decoder()
            self.own.feed(self.tape.body[: self.pos])
        return self.own


def shares_byte_layer(cls: type) -> bool:
    """Whether a handler class reads bytes through the base class's byte layer (its ``read``
    may differ): a :class:`Replay` of a tape can then stand in for its decoder."""
    return all(getattr(cls, m, None) is getattr(Accumulator, m) for m in BYTE_LAYER)


def read_all(handler: Any, reads: Sequence[bytes], tape: Tape | None,
             own_events: bool = False) -> None:
    """``feed_bytes`` each read, through the tape where the handler's byte layer is the
    shared one. ``own_events``: each event a dict of the handler's own (a handler the
    caller does not know may write to it), not the tape's read-only one."""
    cls = type(handler)
    if tape is None or not reads or not shares_byte_layer(cls):
        for chunk in reads:
            handler.feed_bytes(chunk)
        return
    fresh = dict if own_events else None
    if cls.read is Accumulator.read:  # reads the bytes as they come: the tape's events
        handler.use_decoder(Replay(tape, at_end=True))
        for events in tape.events.values():
            for event in events:
                handler.feed(event if fresh is None else fresh(event))
    else:  # ``feed_bytes`` as the base class has it, with the replay's events
        replay = Replay(tape)
        handler.use_decoder(replay)
        for chunk in reads:
            for event in replay.events(handler.read(chunk)):
                handler.feed(event if fresh is None else fresh(event))
