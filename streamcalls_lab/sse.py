"""Server-sent events, decoded from bytes the way the WHATWG spec says.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

The decoder is incremental and works on bytes: it only interprets complete
lines, so a chunk boundary anywhere (inside a multi-byte character, between
the CR and LF of a line end) cannot change the result. Every frame carries
the byte offset of its first line, so an error can point into the file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, repeat
from operator import add, itemgetter
from typing import Any, NamedTuple

from .errors import CaptureError

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_FIELDS = frozenset((b"data", b"event", b"id", b"retry"))
_new = tuple.__new__  # builds a Frame from a tuple without the Python-level __new__
_AFTER_DATA = itemgetter(slice(6, None))  # b"data: " + value
_AFTER_EVENT = itemgetter(slice(7, None))  # b"event: " + value
_FIRST, _THIRD = itemgetter(0), itemgetter(2)


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


class SSEDecoder:
    """Feed bytes in any chunking; get the same frames.

    ``strict=True`` raises :class:`CaptureError` at the first problem;
    ``strict=False`` reports each problem as a frame whose ``problem`` is set
    and goes on, so nothing is dropped without a trace.
    """

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        self.source = source
        self.strict = strict
        self._buf = b""
        self._pos = 0  # absolute offset of _buf[0]
        self._data: list[bytes] = []
        self._data_at: list[int] = []
        self._event = ""
        self._start = -1  # offset of the first field line of the pending frame
        self._junk = False  # inside a run of non-SSE lines, already reported
        self._last_id = ""
        self._retry: int | None = None
        self._seen = 0
        self._t = math.nan
        self._out: list[Frame] = []

    # -- public -----------------------------------------------------------------
    def feed(self, chunk: bytes, t: float = math.nan) -> list[Frame]:
        """Consume one chunk (a socket read); return the frames it completed."""
        if not chunk:
            return []
        self._seen += len(chunk)
        self._t = t
        buf = self._buf + chunk if self._buf else bytes(chunk)
        if self._pos == 0 and len(buf) < 3 and _BOM.startswith(buf):
            self._buf = buf  # maybe a BOM still arriving
            return self._take()
        # A trailing CR may be the first half of CRLF: wait for the next byte.
        last = max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1))
        if last < 0:
            self._buf = buf
            return self._take()
        self._lines(buf, last + 1)
        self._buf = buf[last + 1 :]
        self._pos += last + 1
        return self._take()

    def close(self) -> list[Frame]:
        """End of stream: a pending, undispatched block is reported, never emitted."""
        buf = self._buf
        if buf.endswith(b"\r"):
            self._lines(buf, len(buf))
            self._pos += len(buf)
            buf = b""
        if self._seen == 0:
            self._problem(0, "empty capture: no bytes at all")
        elif (buf or self._start >= 0) and not (self._junk and self._start < 0):
            # (A tail inside a run of non-SSE lines is part of that problem.)
            at = self._start if self._start >= 0 else self._pos
            tail = len(buf) + (self._pos - at if self._start >= 0 else 0)
            self._problem(
                at,
                f"stream ends inside a frame: {tail} bytes after the last complete event "
                "were never terminated by a blank line (truncated capture?)",
            )
        self._buf = b""
        self._reset()
        return self._take()

    # -- internals --------------------------------------------------------------
    def _take(self) -> list[Frame]:
        out, self._out = self._out, []
        return out

    def _reset(self) -> None:
        self._data = []
        self._data_at = []
        self._event = ""
        self._start = -1
        self._retry = None

    def _problem(self, offset: int, reason: str) -> None:
        if self.strict:
            raise CaptureError(self.source, offset, reason)
        row = (offset, offset, "", "", self._last_id, None, self._t, reason)
        self._out.append(_new(Frame, row))

    def _lines(self, buf: bytes, stop: int) -> None:
        """Interpret every complete line in buf[:stop]."""
        region = buf[:stop] if stop < len(buf) else buf
        at = self._pos
        if at == 0 and region.startswith(_BOM):
            # "One leading U+FEFF BYTE ORDER MARK character must be ignored."
            region = region[3:]
            at = 3
        crs = region.count(b"\r")
        if not crs:
            self._blocks(region, at, b"\n")
            return
        if crs == region.count(b"\r\n") == region.count(b"\n"):
            self._blocks(region, at, b"\r\n")  # CRLF throughout
            return
        # Mixed line ends: one line at a time.
        pieces = _EOL.split(region)
        ends = [len(m.group()) for m in _EOL.finditer(region)]
        pieces.pop()  # region ends with a line end, so the last piece is empty
        for line, eol in zip(pieces, ends, strict=True):
            self._line(line, at, at + len(line) + eol)
            at += len(line) + eol

    def _blocks(self, region: bytes, at: int, eol: bytes) -> None:
        """Lines that all end in ``eol``, a frame at a time rather than a line at a time.

        Splitting on a blank line gives each frame's lines as one block; the shapes real
        streams use (``data: …`` alone, or ``event: …`` then ``data: …``) become a frame
        straight away, and anything else goes through :meth:`_line` exactly as before.
        """
        step = len(eol)
        blocks = region.split(eol + eol)
        tail = blocks.pop()  # lines after the last blank line: a frame not yet ended
        out = self._out
        if blocks and self._start < 0:
            frames = self._uniform(blocks, at, eol)
            if frames is not None:
                out += frames
                self._junk = False
                at = frames[-1].end
                blocks = []
        for blk in blocks:
            end = at + len(blk) + 2 * step
            if self._start < 0:  # no frame pending from an earlier chunk
                event = data = None
                try:
                    if eol not in blk:
                        if blk.startswith(b"data: "):
                            event, data = "message", blk[6:].decode("utf-8")
                    elif blk.startswith(b"event: "):
                        nl = blk.find(eol)
                        if blk.startswith(b"data: ", nl + step) and blk.find(eol, nl + step) < 0:
                            event = blk[7:nl].decode("utf-8") or "message"
                            data = blk[nl + step + 6 :].decode("utf-8")
                except UnicodeDecodeError:
                    data = None  # _line and _dispatch say where
                if data is not None:
                    row = (at, end, event, data, self._last_id, None, self._t, None)
                    out.append(_new(Frame, row))
                    self._junk = False
                    at = end
                    continue
            at = self._each_line(blk.split(eol), at, step)
            self._line(b"", at, end)  # the blank line that ended the block
            at = end
        if tail:
            lines = tail.split(eol)
            lines.pop()  # tail ends with eol
            self._each_line(lines, at, step)

    def _each_line(self, lines: list[bytes], at: int, step: int) -> int:
        """:meth:`_line` for lines that each end in ``step`` bytes; returns the offset after."""
        for line in lines:
            nxt = at + len(line) + step
            self._line(line, at, nxt)
            at = nxt
        return at

    def _uniform(self, blocks: list[bytes], at: int, eol: bytes) -> list[Frame] | None:
        """Frames from blocks that all have one usual shape, or None for any other mix.

        All ``data: …``, or all ``event: …`` then ``data: …`` (a stream nearly always is
        one or the other): each field then comes out of a C-level ``map`` over the blocks,
        with no Python code run per frame.
        """
        n = len(blocks)
        inner = sum(map(bytes.count, blocks, repeat(eol)))  # line ends inside the blocks
        try:
            if inner == 0:  # one line each
                if sum(map(bytes.startswith, blocks, repeat(b"data: "))) != n:
                    return None
                events: Iterable[str] = repeat("message")
                datas = list(map(bytes.decode, map(_AFTER_DATA, blocks)))
            elif inner == n:  # two lines each (every block needs one, so none has more)
                if sum(map(bytes.startswith, blocks, repeat(b"event: "))) != n:
                    return None
                parts = list(map(bytes.partition, blocks, repeat(eol)))
                rests = list(map(_THIRD, parts))
                if sum(map(bytes.startswith, rests, repeat(b"data: "))) != n:
                    return None
                events = list(map(bytes.decode, map(_AFTER_EVENT, map(_FIRST, parts))))
                if "" in events:
                    return None  # a bare "event:" means "message": the block-at-a-time way
                datas = list(map(bytes.decode, map(_AFTER_DATA, rests)))
            else:
                return None
        except UnicodeDecodeError:
            return None  # _line and _dispatch say where
        bounds = list(accumulate(map(add, map(len, blocks), repeat(2 * len(eol))), initial=at))
        fields = zip(
            bounds, bounds[1:], events, datas,
            repeat(self._last_id), repeat(None), repeat(self._t), repeat(None),
        )
        return list(map(_new, repeat(Frame), fields))

    def _line(self, line: bytes, at: int, nxt: int) -> None:
        if not line:
            # "If the line is empty (a blank line): dispatch the event."
            self._junk = False
            if self._start >= 0:
                self._dispatch(nxt)
            return
        if line[0] == 0x3A:  # ":" starts a comment; the spec ignores it
            self._junk = False
            return
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name, value = line[:colon], line[colon + 1 :]
            if value[:1] == b" ":
                value = value[1:]
        if name in _FIELDS:
            self._junk = False
            if self._start < 0:
                self._start = at
        if name == b"data":
            self._data.append(value)
            self._data_at.append(at + len(line) - len(value))
        elif name == b"event":
            self._event = self._text(value, at)
        elif name == b"id":
            if b"\0" not in value:
                self._last_id = self._text(value, at)
        elif name == b"retry":
            if value.isdigit():
                self._retry = int(value)
        elif not self._junk:
            # The spec ignores unknown fields; this kit reports them, because a
            # stray line is how an HTML error page or a corrupted capture shows.
            # A run of such lines is one problem, reported at its first line.
            self._junk = True
            if b"\0" in line or not _is_utf8(line):
                why = "binary data (a NUL byte or invalid UTF-8), not an event stream"
            else:
                shown = line[:60].decode("utf-8", "replace")
                why = f"not an SSE field line: {shown!r} (this and any non-SSE lines after it)"
            self._problem(at, why)

    def _text(self, raw: bytes, at: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self._problem(at + e.start, f"invalid UTF-8 (byte 0x{raw[e.start]:02x})")
            return raw.decode("utf-8", "replace")

    def _dispatch(self, end: int) -> None:
        start = self._start
        if not self._data:
            # "If the data buffer is an empty string, ... return": no event.
            self._reset()
            return
        event = self._event or "message"
        raw = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
        problem = None
        try:
            data = raw.decode("utf-8")
        except UnicodeDecodeError:
            data = raw.decode("utf-8", "replace")
            problem = self._bad_utf8()
        row = (start, end, event, data, self._last_id, self._retry, self._t, problem)
        self._out.append(_new(Frame, row))
        self._reset()

    def _bad_utf8(self) -> str:
        for line, at in zip(self._data, self._data_at, strict=True):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as e:
                offset = at + e.start
                reason = f"invalid UTF-8 in data (byte 0x{line[e.start]:02x} at {offset})"
                if self.strict:
                    raise CaptureError(self.source, offset, reason) from None
                return reason
        raise AssertionError("unreachable: joined data failed but no line did")


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def split_whole(buf: bytes) -> tuple[list[int], list[str], list[bytes]] | None:
    """A whole capture in one of the two usual shapes, split without decoding its data.

    Gives each frame's byte offset (and, last, the end of the capture), its event name and
    its data line's bytes: what :class:`SSEDecoder` gives for the same bytes when every
    frame is ``data: …`` alone, or every frame ``event: …`` then ``data: …``, with one kind
    of line end (LF, or CRLF throughout) and nothing unterminated. None for anything else,
    which the decoder then reads line by line. Checked a column at a time, in C. The data
    is not checked for UTF-8 here: whoever parses it must (``msgspec`` and ``orjson`` do).
    """
    eol = b"\n"
    if b"\r" in buf:  # CRLF throughout, or the decoder's way
        if not buf.count(b"\r") == buf.count(b"\r\n") == buf.count(b"\n"):
            return None
        eol = b"\r\n"
    if not buf.endswith(eol + eol) or buf.startswith(_BOM):
        return None
    lines = buf.split(eol)
    del lines[-1]  # after the last line end; the list now ends with the last blank line
    step = 3 if lines[0].startswith(b"event: ") else 2  # lines per frame, the blank included
    n, odd = divmod(len(lines), step)
    if odd or any(lines[step - 1 :: step]):
        return None  # a blank line where a field should be, or a field where it should not
    data_lines = lines[step - 2 :: step]
    if sum(map(bytes.startswith, data_lines, repeat(b"data: "))) != n:
        return None
    sizes = map(len, data_lines)
    if step == 2:
        events = ["message"] * n
    else:
        event_lines = lines[::3]
        if sum(map(bytes.startswith, event_lines, repeat(b"event: "))) != n:
            return None
        try:
            events = list(map(bytes.decode, map(_AFTER_EVENT, event_lines)))
        except UnicodeDecodeError:
            return None
        if "" in events:
            return None  # a bare "event:" means "message": the decoder's way
        sizes = map(add, sizes, map(len, event_lines))
    bounds = list(accumulate(map(add, sizes, repeat(step * len(eol))), initial=0))
    return bounds, events, list(map(_AFTER_DATA, data_lines))


def decode_frames(
    chunks: Iterable[bytes | tuple[float, bytes]],
    source: str = "<bytes>",
    *,
    strict: bool = True,
    framing: Callable[..., Any] = SSEDecoder,
) -> Iterator[Frame]:
    """Frames from an iterable of chunks; a chunk may be ``(t, bytes)`` to carry its time.

    ``framing`` is the decoder class: anything with this decoder's ``feed`` and ``close``.
    """
    dec = framing(source, strict=strict)
    for chunk in chunks:
        if isinstance(chunk, tuple):
            yield from dec.feed(chunk[1], chunk[0])
        else:
            yield from dec.feed(chunk)
    yield from dec.close()
