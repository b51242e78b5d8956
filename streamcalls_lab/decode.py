"""Frames' bytes to normalised events, in any chunking: the incremental half of ``load()``.

Framing (SSE, NDJSON or AWS event-stream) is chosen by :class:`.eventstream.AutoDecoder`;
here each frame's data is parsed once, the format is sniffed from the first frames that
show it, and the format's reader says what the frame means.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson

from . import _deepjson as deepjson
from .errors import CaptureError
from .events import DONE, DONE_ROWS, PAYLOAD_ERRORS, Ev, conflict, error_message, is_done
from .framing import AutoDecoder
from .framing.frame import Frame
from .providers import READERS, sniff
from .providers.misread import Watch
from .providers.unknown import undetected_reasons

_new = tuple.__new__  # a Decoded from a tuple, without the Python-level __new__
_DIGITS = re.compile(r"\d+")
UNKNOWN = "unknown"


def check_provider(provider: str) -> None:
    """A ``ValueError`` for a provider no reader has (``"auto"`` sniffs)."""
    if provider != "auto" and provider not in READERS:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(READERS)}")


def _undetected(event: str, payload: Any, reason: str) -> Ev:
    """A frame of a stream whose format never showed itself."""
    if event == "error" or (isinstance(payload, dict) and "error" in payload):
        return Ev.provider_error(event, error_message(payload))
    return Ev(event, "other", problem=reason)


class Decoded(NamedTuple):
    """One normalised event with the frame it came from."""

    frame: Frame
    n: int
    """The frame's number in the turn (problem frames count too)."""
    provider: str
    ev: Ev


class EventDecoder:
    """Bytes in any chunking to normalised events: the incremental half of ``load()``.

    ``feed(chunk)`` returns the events the chunk completed, ``close()`` those the end of
    the stream releases. Frames that arrive before the format shows itself (a ping) are
    held back and come out, with the format's name, once it does.
    """

    def __init__(self, source: str = "<bytes>", *, provider: str = "auto",
                 strict: bool = True, fold: bool = False) -> None:
        check_provider(provider)
        self.source = source
        self.strict = strict
        self.fold = fold
        self.problems = 0  # problem rows emitted
        self.runs: dict[int, int] = {}
        """With ``fold``: frame number of a problem row -> frames in its run (when over 1)."""
        # the run of problems so far: event, first reason, it without numbers, frame, length
        self._streak: tuple[str, str, str, int, int] | None = None
        self.fmt = READERS[provider]() if provider != "auto" else None
        self._watch = Watch(provider) if provider != "auto" else None  # for a misread
        # The framing always reads leniently: its problems come out as frames, in order with
        # the frames before them, and strictness is decided here, frame by frame. A strict
        # framing would raise at a later frame's problem while an earlier frame of the same
        # read (bad JSON) was not yet interpreted: the error would depend on the chunking.
        self._sse = AutoDecoder(source, strict=False)
        self._pending: list[tuple[Frame, int, Any]] = []
        self._frames = 0
        self._out: list[Decoded] = []

    @property
    def provider(self) -> str:
        return self.fmt.name if self.fmt is not None else UNKNOWN

    def feed(self, chunk: bytes, t: float = math.nan) -> list[Decoded]:
        self._run(self._sse.feed(chunk, t))
        return self._take()

    def close(self) -> list[Decoded]:
        self._run(self._sse.close())
        held = self._pending  # the format never showed itself
        reasons = undetected_reasons([(fr.event, payload, fr.data) for fr, _, payload in held])
        for (fr, n, payload), reason in zip(held, reasons, strict=True):
            self._emit(fr, n, [_undetected(fr.event, payload, reason)])
        self._pending.clear()
        verdict = self._watch.verdict() if self._watch is not None else None
        if verdict is not None:  # at the frame that shows it, numbered past the last
            fr, reason = verdict
            self._problem(fr, self._frames, reason)
        return self._take()

    def _take(self) -> list[Decoded]:
        out, self._out = self._out, []
        return out

    def _emit(self, fr: Frame, n: int, evs: Sequence[Ev]) -> None:
        name = self.provider
        out = self._out
        for ev in evs:
            out.append(_new(Decoded, (fr, n, name, ev)))

    def _problem(self, fr: Frame, n: int, reason: str) -> None:
        if self.strict:
            raise CaptureError(self.source, fr.offset, reason)
        self._report(fr, n, reason)

    def _report(self, fr: Frame, n: int, reason: str) -> None:
        """A problem's row; with ``fold``, a problem like the one of the frame before
        (numbers aside) only counts in that row's run, so a million bad frames cost a row."""
        if self.fold:
            run = self._streak
            if run is not None and run[3] + run[4] == n and run[0] == fr.event and (
                run[1] == reason or run[2] == _DIGITS.sub("#", reason)
            ):
                self._streak = (*run[:4], run[4] + 1)
                self.runs[run[3]] = run[4] + 1
                return
            self._streak = (fr.event, reason, _DIGITS.sub("#", reason), n, 1)
        self.problems += 1
        self._emit(fr, n, [Ev(fr.event, "error", problem=reason)])

    def _interpret(self, fr: Frame, n: int, payload: Any) -> None:
        if payload is DONE:  # the end-of-stream sentinel, whatever the format
            self._emit(fr, n, DONE_ROWS)
            return
        fmt = self.fmt
        assert fmt is not None
        try:
            evs = fmt.normalize(fr.event, payload, fr.data)
        except PAYLOAD_ERRORS as e:
            self._unexpected(fr, n, e)
            return
        if self.strict and (problem := conflict(evs)) is not None:
            raise CaptureError(self.source, fr.offset, problem)
        self._emit(fr, n, evs)
        self._watch.see(fr, n, fr.event, payload, fr.data, evs)  # type: ignore[union-attr]

    def _unexpected(self, fr: Frame, n: int, e: Exception) -> None:
        name = self.provider
        self._problem(fr, n, f"unexpected {name} payload: {type(e).__name__}: {e}")

    def _run(self, frames: list[Frame]) -> None:
        for fr in frames:
            self._frame(fr)

    def _frame(self, fr: Frame) -> None:
        n = self._frames
        self._frames += 1
        if fr.problem is not None:
            self._problem(fr, n, fr.problem)
            return
        if is_done(fr.data):
            payload: Any = DONE
        else:
            try:
                payload = orjson.loads(fr.data)
            except orjson.JSONDecodeError as e:
                try:  # refused only for orjson's own limits (a call's arguments nested past
                    # 1,024, inline in Gemini's and Ollama's frames; an integer wider than a
                    # double): read as the fast path's msgspec reads it
                    payload = deepjson.beyond_orjson(fr.data, e)
                except (ValueError, RecursionError):
                    self._problem(fr, n, f"invalid JSON in data: {e}")
                    return
        if self.fmt is None:
            found = sniff(fr.event, payload)
            if found is None:
                self._pending.append((fr, n, payload))
                return
            self.fmt, self._watch = READERS[found](), Watch(found)
            for held in self._pending:
                self._interpret(*held)
            self._pending.clear()
        self._interpret(fr, n, payload)
