"""Replay a capture read by read: all at once, at the recorded pace, or faster or slower.

A capture with a timing sidecar replays its recorded socket reads at their
recorded times. One without is cut into its SSE frames (each frame one read)
spaced by a chosen ``default_delay``, the closest stand-in for a live stream.
The bytes are the capture's bytes either way; only the pace is chosen.

Pacing is scheduled from one start time, so a slow consumer does not push
every later read back. ``clock`` and ``sleep`` are parameters so tests (and
notebooks stepping through a stream) never have to wait for real.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from .. import timing
from ..errors import CaptureError
from ..framing import FRAMINGS, AutoDecoder
from ..sources import Source, resolve

Clock = Callable[[], float]
Sleep = Callable[[float], object]
AsyncSleep = Callable[[float], Awaitable[object]]
EVENT_STREAM = "text/event-stream"
AWS_EVENT_STREAM = "application/vnd.amazon.eventstream"  # what Bedrock sends
NDJSON = "application/x-ndjson"  # what Ollama sends
JSON = "application/json"  # what Gemini streams a JSON array under
MEDIA_TYPES: dict[type, str] = {f.decoder: f.media_type for f in FRAMINGS.values()}
"""The content type each framing is sent under, by its decoder (``Framing.media_type``)."""


@dataclass(frozen=True, slots=True)
class Read:
    """One socket read to hand out: its bytes and when it is due (seconds after the first)."""

    t: float
    data: bytes


def reads(source: Source, *, default_delay: float = 0.0, name: str | None = None) -> list[Read]:
    """The reads of one capture: recorded ones when timed, else one per frame.

    Untimed reads are due at ``i * default_delay``; a trailing piece that is
    not a whole frame (a truncated capture) is one more read.
    """
    if timing.problem(default_delay) is not None:
        raise ValueError(f"default_delay must be a number of seconds from 0 to "
                         f"{timing.MAX_SECONDS:g}, not {default_delay}")
    caps = resolve(source, name)
    if len(caps) != 1:
        raise ValueError(f"replay needs exactly one capture, the source holds {len(caps)}")
    chunks = list(caps[0].chunks)
    if chunks and all(isinstance(c, tuple) for c in chunks):
        out = [Read(t, bytes(b)) for t, b in chunks]  # type: ignore[misc]
        t0, last, at = out[0].t, 0.0, 0
        for i, r in enumerate(out):  # a time that cannot be slept out is refused here
            why = timing.problem(r.t - t0, last) if math.isfinite(t0) else timing.problem(t0)
            if why is not None:
                raise CaptureError(caps[0].name, at, f"read {i + 1}: {why}")
            last, at = r.t - t0, at + len(r.data)
        return out
    body = b"".join(c[1] if isinstance(c, tuple) else bytes(c) for c in chunks)
    pieces = _frame_pieces(body)
    return [Read(i * default_delay, p) for i, p in enumerate(pieces)]


def _frame_pieces(body: bytes) -> list[bytes]:
    """``body`` cut just after each frame (SSE: its blank line, leading comments riding with
    it; AWS event-stream: each message)."""
    dec = AutoDecoder(strict=False)
    ends = [f.end for f in dec.feed(body) + dec.close() if f.problem is None]
    pieces, at = [], 0
    for end in ends:
        pieces.append(body[at:end])
        at = end
    if at < len(body):
        pieces.append(body[at:])
    return pieces


def content_type(chunks: Sequence[Read]) -> str:
    """The content type a server sends these reads under: that of the framing
    :class:`~.eventstream.AutoDecoder` reads them as (SSE, AWS event-stream, NDJSON, a JSON
    array)."""
    dec = AutoDecoder(strict=False)
    for r in chunks:
        dec.feed(r.data)
        if dec.decoder is not None:
            break
    else:
        dec.close()  # empty or all whitespace: read as SSE
    assert dec.framing is not None  # feed or close chose one
    return dec.framing.media_type


def due_times(chunks: Sequence[Read], speed: float = 1.0) -> list[float]:
    """When each read is due, in seconds after the first, at ``speed`` (``inf``: all at once)."""
    if not speed > 0:
        raise ValueError(f"speed must be > 0 (math.inf for no waiting), not {speed}")
    if not chunks or math.isinf(speed):
        return [0.0] * len(chunks)
    t0 = chunks[0].t
    due = [(r.t - t0) / speed for r in chunks]
    if due[-1] > timing.MAX_SECONDS:  # a wait no clock can sleep out is no pace
        raise ValueError(f"at speed {speed:g} the last read is due {due[-1]:g} s after the "
                         f"first: more than {timing.MAX_SECONDS:g} s")
    return due


class Pace(TypedDict, total=False):
    """How reads are paced, one set of keywords for every pacing function: ``speed``
    scales the recorded pace (default 1.0; ``math.inf``: no waiting) and ``clock``
    measures it (default ``time.monotonic``)."""

    speed: float
    clock: Clock


def _schedule(
    chunks: Sequence[Read], speed: float = 1.0, clock: Clock = time.monotonic
) -> Iterator[tuple[float, bytes]]:
    """Each read with how long to wait before it, measured from one start time.

    The clock is read when the consumer asks for the next read, so a slow
    consumer never pushes later reads further back.
    """
    start: float | None = None
    for when, read in zip(due_times(chunks, speed), chunks, strict=True):
        if start is None:
            start = clock()
        yield when - (clock() - start), read.data


def paced(
    chunks: Sequence[Read], *, sleep: Sleep = time.sleep, **pace: Unpack[Pace]
) -> Iterator[bytes]:
    """Yield each read's bytes no earlier than its due time (``pace``: :class:`Pace`).

    Not a generator itself, so a misspelled keyword fails here, at the call."""
    return _slept(_schedule(chunks, **pace), sleep)


def _slept(steps: Iterator[tuple[float, bytes]], sleep: Sleep) -> Iterator[bytes]:
    for wait, data in steps:
        if wait > 0:
            sleep(wait)
        yield data


def apaced(
    chunks: Sequence[Read], *, sleep: AsyncSleep = asyncio.sleep, **pace: Unpack[Pace]
) -> AsyncIterator[bytes]:
    """:func:`paced` for asyncio: awaits each wait instead of blocking the event loop."""
    return _awaited(_schedule(chunks, **pace), sleep)


async def _awaited(steps: Iterator[tuple[float, bytes]],
                   sleep: AsyncSleep) -> AsyncIterator[bytes]:
    for wait, data in steps:  # _slept's loop, awaiting: the schedule itself is shared
        if wait > 0:
            await sleep(wait)
        yield data


def replay(
    source: Source, *, default_delay: float = 0.0, sleep: Sleep = time.sleep,
    **pace: Unpack[Pace],
) -> Iterator[bytes]:
    """A capture's bytes, read by read, at the recorded pace times ``speed``."""
    return paced(reads(source, default_delay=default_delay), sleep=sleep, **pace)


def areplay(
    source: Source, *, default_delay: float = 0.0, sleep: AsyncSleep = asyncio.sleep,
    **pace: Unpack[Pace],
) -> AsyncIterator[bytes]:
    """:func:`replay` for asyncio."""
    return apaced(reads(source, default_delay=default_delay), sleep=sleep, **pace)
