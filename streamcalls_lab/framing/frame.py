"""What every framing gives and shares: the :class:`Frame`, and the decoder base.

SSE, NDJSON, streamed JSON arrays and AWS event-stream all decode into the same frames,
each knowing its byte span in the capture, so every layer above reads any framing.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .. import _deepjson as deepjson
from ..errors import CaptureError

BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark: no content where a capture starts with it."""

_new = tuple.__new__  # builds a Frame from a tuple without the Python-level __new__


class Frame(NamedTuple):
    """One dispatched event, or (lenient mode) one problem found in the bytes.

    A named tuple rather than a dataclass: a long capture has hundreds of thousands of
    frames, and a tuple is built several times faster (and unpacks into columns in C).
    """

    offset: int
    """Byte offset of the frame's first line in the capture."""
    end: int
    """Byte offset just past the blank line that dispatched it."""
    event: str
    """The `event` field, or "message" when the frame has none (the spec's default)."""
    data: str
    """The `data` lines joined with "\\n"."""
    id: str = ""
    """The last event ID seen so far (the spec carries it across frames)."""
    retry: int | None = None
    t: float = math.nan
    """Seconds since the first byte when the read that completed the frame arrived."""
    problem: str | None = None
    """Lenient mode only: why these bytes are not a well-formed event."""


def _frame(offset: int, end: int, event: str, data: str, id: str, retry: int | None,
           t: float, problem: str | None) -> Frame:
    """A :class:`Frame` from its fields, without NamedTuple's keyword handling."""
    return _new(Frame, (offset, end, event, data, id, retry, t, problem))


class FrameDecoder:
    """What every framing's decoder shares: counting bytes, the read's time, handing back
    completed frames, and reporting a problem (raised when strict, else a frame).

    A subclass reads a chunk in :meth:`_read` and, at the end of the stream, reports what
    is left over in :meth:`_end`; ``feed`` and ``close`` are the same for every framing.
    """

    _EVENT = ""
    """The ``event`` of a problem frame."""

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        self.source = source
        self.strict = strict
        self._seen = 0
        self._t = math.nan
        self._out: list[Frame] = []

    def feed(self, chunk: bytes, t: float = math.nan) -> list[Frame]:
        """Consume one chunk (a socket read); return the frames it completed."""
        if not chunk:
            return []
        self._seen += len(chunk)
        self._t = t
        self._read(chunk)
        return self._take()

    def close(self) -> list[Frame]:
        """End of stream: what was never completed is reported, never emitted."""
        if self._seen == 0:
            self._problem(0, 0, "empty capture: no bytes at all")
        self._end()
        return self._take()

    def _read(self, chunk: bytes) -> None:
        raise NotImplementedError

    def _end(self) -> None:
        raise NotImplementedError

    def _take(self) -> list[Frame]:
        out, self._out = self._out, []
        return out

    def _problem(self, offset: int, end: int, reason: str, event: str | None = None,
                 id: str = "") -> None:
        if self.strict:
            raise CaptureError(self.source, offset, reason)
        event = self._EVENT if event is None else event
        self._out.append(_frame(offset, end, event, "", id, None, self._t, reason))


class LineDecoder(FrameDecoder):
    """A framing of ``\\n``-ended lines (NDJSON, type-prefixed lines): a subclass reads each
    whole line in :meth:`_line`, and says in :meth:`_whole` when a last line with no line
    end is a frame all the same.

    Only a new read is searched for a line end (held bytes hold none), and held bytes are
    joined once, when their line ends: a line of any length costs one copy, not one per read.
    """

    _WHOLE = "whole JSON"
    """What a last line with no line end must be to be a frame (said when it is not)."""

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        super().__init__(source, strict=strict)
        self._held: list[bytes] = []  # bytes after the last line end, read by read
        self._pos = 0  # absolute offset of the held bytes' first byte
        self._stopped = False  # set by a subclass once nothing after this is its to read

    def _read(self, chunk: bytes) -> None:
        if self._stopped:
            return
        last = chunk.rfind(b"\n")
        if last < 0:
            self._held.append(bytes(chunk))
            return
        held = self._held
        stop = sum(map(len, held)) + last + 1  # just past the last line end
        buf = b"".join((*held, chunk)) if held else bytes(chunk)
        at = self._pos
        for line in buf[:stop].split(b"\n")[:-1]:
            self._line(line, at, at + len(line) + 1)
            at += len(line) + 1
        self._pos = at
        self._held = [buf[stop:]] if stop < len(buf) else []

    def _end(self) -> None:
        """A last line without its ``\\n`` is a frame only when it is whole (:meth:`_whole`)."""
        buf, at = b"".join(self._held), self._pos
        self._held = []
        self._pos += len(buf)
        if not buf.strip() or self._stopped:
            return
        if self._whole(buf):
            self._line(buf, at, at + len(buf))
        else:
            self._problem(at, at + len(buf), f"stream ends inside a line: the last {len(buf)} "
                          f"bytes have no line end and are not {self._WHOLE} (truncated "
                          "capture?)")

    def _whole(self, line: bytes) -> bool:
        """Whether a line is whole as it stands (at any depth: orjson stops at 1,024)."""
        return deepjson.is_json(line)

    def _line(self, line: bytes, at: int, end: int) -> None:
        """One line, its ``\\n`` cut off (``end`` is just past it): a ``\\r`` before it and
        a leading byte-order mark are no content (as in SSE), a blank line carries nothing."""
        body = line[:-1] if line.endswith(b"\r") else line
        if at == 0 and body.startswith(BOM):
            body, at = body[3:], 3
        if body.strip(b" \t") and not self._stopped:
            self._content(body, at, end)

    def _content(self, body: bytes, at: int, end: int) -> None:
        """A line with content, from ``at`` (its first content byte) to ``end``."""
        raise NotImplementedError

    def _binary(self, body: bytes, at: int, end: int, framing: str) -> bool:
        """Whether the line holds a NUL byte (said as a problem: binary data, not ``framing``)."""
        if b"\0" not in body:
            return False
        self._problem(at + body.index(b"\0"), end, f"binary data (a NUL byte), not {framing}")
        return True

    def _text(self, body: bytes, at: int, end: int) -> str | None:
        """The line as text, or None once its invalid UTF-8 is said as a problem."""
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError as e:
            where = at + e.start
            self._problem(where, end, f"invalid UTF-8 in a line (byte 0x{body[e.start]:02x} "
                          f"at {where})")
            return None
