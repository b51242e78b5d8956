"""Server-sent events, decoded from bytes the way the WHATWG spec says.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

The decoder is incremental and works on bytes: it only interprets complete
lines, so a chunk boundary anywhere (inside a multi-byte character, between
the CR and LF of a line end) cannot change the result. Every frame carries
the byte offset of its first line, so an error can point into the file.

The writer (:func:`sse_frame`, :func:`sse_body`) is the inverse, and the one place the kit
writes SSE: the check suite, the torture harness, the generator, redaction and the tests'
turns all write their frames here, so a framing rule lives once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, repeat
from operator import add, itemgetter
from typing import Any, Literal

from ..errors import CaptureError
from .containers import container_signature, wrong_container
from .frame import Frame, FrameDecoder, _frame
from .spec import Framing, Served, Transport, Values, Written, as_text, crlf_cases, same_size

EVENT = "message"
"""The ``event`` of a frame that names none (the SSE spec's default)."""
_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_FIELDS = frozenset((b"data", b"event", b"id", b"retry"))
_new = tuple.__new__  # builds a Frame from a tuple without the Python-level __new__
_AFTER_DATA = itemgetter(slice(6, None))  # b"data: " + value
_AFTER_EVENT = itemgetter(slice(7, None))  # b"event: " + value


def _junk_reason(line: bytes) -> str:
    """Why a line that is no SSE field is a problem: what it shows the capture to be."""
    known = wrong_container(line)
    if b"\0" in line or not is_utf8(line):
        return "binary data (a NUL byte or invalid UTF-8), not an event stream" + (
            f": {known}" if known else "")
    shown = line[:60].decode("utf-8", "replace")
    return (f"not an SSE field line: {shown!r} ({known + '; ' if known else ''}this and any "
            "non-SSE lines after it)")


_RETRY_DIGITS = 18  # any value of up to 18 digits fits in 63 bits


class SSEDecoder(FrameDecoder):
    """Feed bytes in any chunking; get the same frames: the reference decoder.

    Every line goes through the spec's rules (:meth:`_line`), except that a run of complete
    frames in one of the usual shapes is handed to :func:`split_whole`, which gives the
    same frames faster (``tests/test_fastpath.py`` checks that it does). Each byte is looked
    at a bounded number of times, however the bytes are chunked.

    ``strict=True`` raises :class:`CaptureError` at the first problem;
    ``strict=False`` reports each problem as a frame whose ``problem`` is set
    and goes on, so nothing is dropped without a trace.
    """

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        super().__init__(source, strict=strict)
        self._held: list[bytes] = []  # bytes after the last line end, chunk by chunk
        self._held_cr = False  # the held bytes end with CR: a line end, maybe half a CRLF
        self._pos = 0  # absolute offset of the held bytes' first byte
        self._data: list[bytes] = []
        self._data_at: list[int] = []
        self._event = ""
        self._start = -1  # offset of the first field line of the pending frame
        self._junk = False  # inside a run of non-SSE lines, already reported
        self._last_id = ""
        self._retry: int | None = None

    def feed(self, chunk: bytes, t: float = math.nan) -> list[Frame]:
        # A read with no line end in it (most of them, in small reads) is only held: taken
        # here, without the general path's search and calls, it costs a quarter less.
        if (type(chunk) is bytes and chunk and not self._held_cr
                and b"\n" not in chunk and b"\r" not in chunk):
            self._seen += len(chunk)
            self._t = t
            self._held.append(chunk)
            return []
        return super().feed(chunk, t)

    # -- internals --------------------------------------------------------------
    def _read(self, chunk: bytes) -> None:
        chunk = bytes(chunk)
        # Only the new chunk is searched for a line end: held bytes hold none (but a
        # final CR, which may be the first half of a CRLF: it ends a line once a byte follows).
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r", 0, len(chunk) - 1))
        if last < 0 and not self._held_cr:
            self._hold(chunk)
            return
        held = self._held
        before = sum(map(len, held))
        buf = b"".join((*held, chunk)) if held else chunk
        if self._pos == 0 and len(buf) < 3 and _BOM.startswith(buf):
            self._held, self._held_cr = [buf], False  # maybe a BOM still arriving
            return
        stop = before + last + 1 if last >= 0 else before  # just past the last line end
        self._lines(buf, stop)
        rest = buf[stop:]
        self._pos += stop
        self._held = [rest] if rest else []
        self._held_cr = rest.endswith(b"\r")

    def _end(self) -> None:
        """A pending, undispatched block is reported, never emitted."""
        held = sum(map(len, self._held))  # (an unterminated tail is measured, not joined)
        if self._held_cr:
            tail = b"".join(self._held)
            self._lines(tail, len(tail))
            self._pos += held
            held = 0
        if (held or self._start >= 0) and not (self._junk and self._start < 0):
            # (A tail inside a run of non-SSE lines is part of that problem.)
            head = self._head() if held and self._start < 0 else b""
            if container_signature(head) is not None:  # a last line that is no field
                self._fault(self._pos, _junk_reason(head))
            else:
                at = self._start if self._start >= 0 else self._pos
                tail = held + (self._pos - at if self._start >= 0 else 0)
                self._fault(
                    at,
                    f"stream ends inside a frame: {tail} bytes after the last complete event "
                    "were never terminated by a blank line (truncated capture?)",
                )
        self._held, self._held_cr = [], False
        self._reset()

    def _head(self, n: int = 64) -> bytes:
        """The first ``n`` held bytes, however the reads cut them."""
        head = b""
        for piece in self._held:
            head += piece[: n - len(head)]
            if len(head) >= n:
                break
        return head

    def _hold(self, chunk: bytes) -> None:
        self._held.append(chunk)
        self._held_cr = chunk.endswith(b"\r")

    def _reset(self) -> None:
        self._data = []
        self._data_at = []
        self._event = ""
        self._start = -1
        self._retry = None

    def _fault(self, offset: int, reason: str) -> None:
        """A problem at one point of a line, under the event ID seen so far."""
        self._problem(offset, offset, reason, id=self._last_id)

    def _lines(self, buf: bytes, stop: int) -> None:
        """Interpret every line of ``buf[:stop]``, which ends with a line end."""
        region = buf[:stop] if stop < len(buf) else buf
        at = self._pos
        if at == 0 and region.startswith(_BOM):
            # "One leading U+FEFF BYTE ORDER MARK character must be ignored."
            region = region[3:]
            at = 3
        if self._start >= 0:
            # The frame the last read left pending (a read mostly ends inside one): its lines
            # one by one up to the blank line that ends it, then the rest as any read's.
            done = self._pending(region, at)
            region = region[done:]
            at += done
        if self._start < 0:  # no frame pending: the complete frames may be the usual shape
            cut = self._usual(region, at)
            region = region[cut:]
            at += cut
        pieces = _EOL.split(region)
        pieces.pop()  # region ends with a line end, so the last piece is empty
        ends = map(len, _EOL.findall(region))
        for line, eol in zip(pieces, ends, strict=True):
            nxt = at + len(line) + eol
            self._line(line, at, nxt)
            at = nxt

    def _pending(self, region: bytes, at: int) -> int:
        """Interpret ``region``'s lines up to the blank line that ends the pending frame;
        how many bytes they took (all of ``region`` when none does)."""
        pos = 0
        for eol in _EOL.finditer(region):
            line, end = region[pos : eol.start()], eol.end()
            self._line(line, at + pos, at + end)
            pos = end
            if not line and self._start < 0:
                break
        return pos

    def _usual(self, region: bytes, at: int) -> int:
        """The complete frames at the start of ``region`` through :func:`split_whole`, when
        they have one of the usual shapes; how many bytes they took (0 when they do not)."""
        eol = b"\r\n" if b"\r" in region else b"\n"
        cut = region.rfind(eol + eol) + 2 * len(eol)
        if cut < 2 * len(eol):
            return 0
        split = split_whole(region[:cut] if cut < len(region) else region, comments=False)
        if split is None:
            return 0
        bounds, events, raws = split
        try:
            datas = list(map(bytes.decode, raws))
        except UnicodeDecodeError:
            return 0  # _line and _dispatch say where
        fields = zip(
            map(add, bounds, repeat(at)), map(add, bounds[1:], repeat(at)), events, datas,
            repeat(self._last_id), repeat(None), repeat(self._t), repeat(None),
        )
        self._out += map(_new, repeat(Frame), fields)
        self._junk = False
        return cut

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
            self._read_retry(value, at + len(line) - len(value))
        elif not self._junk:
            # The spec ignores unknown fields; this kit reports them, because a
            # stray line is how an HTML error page or a corrupted capture shows.
            # A run of such lines is one problem, reported at its first line.
            self._junk = True
            self._fault(at, _junk_reason(line))

    def _read_retry(self, value: bytes, at: int) -> None:
        """"If the field value consists of only ASCII digits", the reconnection time; any
        other value is ignored, as the spec says. One too long for 64 bits is a problem
        (and never ``int()``'s digit limit)."""
        if not (value.isdigit() and value.isascii()):
            return
        digits = value.lstrip(b"0") or b"0"
        if len(digits) > _RETRY_DIGITS:
            self._fault(at, f"retry: a value of {len(value)} digits, too large for "
                              "a reconnection time (more than 18 digits)")
            return
        self._retry = int(digits)

    def _text(self, raw: bytes, at: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self._fault(at + e.start, f"invalid UTF-8 (byte 0x{raw[e.start]:02x})")
            return raw.decode("utf-8", "replace")

    def _dispatch(self, end: int) -> None:
        start = self._start
        if not self._data:
            # "If the data buffer is an empty string, ... return": no event.
            self._reset()
            return
        event = self._event or EVENT
        raw = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
        problem = None
        try:
            data = raw.decode("utf-8")
        except UnicodeDecodeError:
            data = raw.decode("utf-8", "replace")
            start, problem = self._bad_utf8()  # the frame sits at the byte, as strict says
        self._out.append(_frame(start, end, event, data, self._last_id, self._retry, self._t,
                                problem))
        self._reset()

    def _bad_utf8(self) -> tuple[int, str]:
        """Where the data's first invalid UTF-8 byte is, and the problem's reason."""
        for line, at in zip(self._data, self._data_at, strict=True):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as e:
                offset = at + e.start
                reason = f"invalid UTF-8 in data (byte 0x{line[e.start]:02x} at {offset})"
                if self.strict:
                    raise CaptureError(self.source, offset, reason) from None
                return offset, reason
        raise AssertionError("unreachable: joined data failed but no line did")


def is_utf8(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 text as a whole."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def split_whole(buf: bytes, *, comments: bool = True
                ) -> tuple[list[int], list[str], list[bytes]] | None:
    """A whole capture in one of the two usual shapes, split without decoding its data.

    Gives each frame's byte offset (and, last, the end of the capture), its event name and
    its data line's bytes: what :class:`SSEDecoder` gives for the same bytes when every
    frame is ``data: …`` alone, or every frame ``event: …`` then ``data: …``, with one kind
    of line end (LF, or CRLF throughout) and nothing unterminated. None for anything else,
    which the decoder then reads line by line. Checked a column at a time, in C. The data
    is not checked for UTF-8 here: whoever parses it must (``msgspec`` and ``orjson`` do).

    With ``comments``, frames of one comment line alone (OpenRouter's ``: OPENROUTER
    PROCESSING`` keep-alive), which dispatch nothing, are passed over: the offsets are then
    not contiguous, so a frame's end is not the next offset (the decoder, which needs the
    ends, asks without).
    """
    eol = b"\n"
    # (``find``, not ``in``: ``in`` on bytes first tries its operand as an integer, and
    # raises and clears a TypeError every time)
    if buf.find(b"\r") >= 0:  # CRLF throughout, or the decoder's way
        if not buf.count(b"\r") == buf.count(b"\r\n") == buf.count(b"\n"):
            return None
        eol = b"\r\n"
    if not buf.endswith(eol + eol) or buf.startswith(_BOM):
        return None
    lines = buf.split(eol)
    del lines[-1]  # after the last line end; the list now ends with the last blank line
    got = _split_lines(buf, eol, lines, None)
    # A comment line cannot pass those checks (each line is a field or a frame's blank),
    # so the body is searched for one only when they fail, which is rare.
    if got is None and comments and has_comment_line(buf):
        kept = _without_comments(lines, len(eol))
        if kept is not None:
            got = _split_lines(buf, eol, *kept)
    return got


def has_comment_line(buf: bytes) -> bool:
    """Whether a line of ``buf`` (LF or CRLF line ends) is a comment, one that starts with
    ``:``: a frame of one alone is what :func:`split_whole` passes over."""
    return buf.startswith(b":") or buf.find(b"\n:") >= 0


def _split_lines(buf: bytes, eol: bytes, lines: list[bytes], starts: list[int] | None
                 ) -> tuple[list[int], list[str], list[bytes]] | None:
    """:func:`split_whole` of ``buf``'s ``lines``; ``starts``, each frame's offset where
    comment frames were taken out of them (else they follow from the lines)."""
    step = 3 if lines[0].startswith(b"event: ") else 2  # lines per frame, the blank included
    n, odd = divmod(len(lines), step)
    if odd or any(lines[step - 1 :: step]):
        return None  # a blank line where a field should be, or a field where it should not
    data_lines = lines[step - 2 :: step]
    event_lines = lines[::3] if step == 3 else None
    if not _fields_in_place(data_lines, event_lines):
        return None
    sizes = map(len, data_lines)
    if event_lines is None:
        events = [EVENT] * n
    else:
        try:  # one str per distinct name: streams repeat a handful of them
            events = list(map(_EVENT_NAMES.__getitem__, event_lines))
        except UnicodeDecodeError:
            return None
        if "" in events:
            return None  # a bare "event:" means "message": the decoder's way
        sizes = map(add, sizes, map(len, event_lines))
    if starts is None:
        bounds = list(accumulate(map(add, sizes, repeat(step * len(eol))), initial=0))
    else:
        bounds = starts
        bounds.append(len(buf))
    return bounds, events, list(map(_AFTER_DATA, data_lines))


def _fields_in_place(data_lines: list[bytes], event_lines: list[bytes] | None) -> bool:
    """Whether each frame's data line is ``data: …`` and (where frames have an event line)
    each event line ``event: …``, the blank lines being already checked. The lines that
    start with a prefix are those from it up to the prefix with its last byte raised
    (``data: `` <= line < ``data:!``), so ``min`` and ``max`` check a column in C, one
    comparison a line: counting the prefixes in the body searched every byte of it."""
    return (min(data_lines) >= b"data: " and max(data_lines) < b"data:!"
            and (event_lines is None
                 or (min(event_lines) >= b"event: " and max(event_lines) < b"event:!")))


class _EventNames(dict[bytes, str]):
    """An ``event: `` line's name, decoded once per distinct line, for every capture: a
    format names its events alike in each (a cache per capture decoded each name again in
    Python). Bounded: past :attr:`KEPT` names (a capture of made-up ones), it starts over."""

    KEPT = 1024

    def __missing__(self, line: bytes) -> str:
        name = _AFTER_EVENT(line).decode()
        if len(self) >= self.KEPT:
            self.clear()
        self[line] = name
        return name


_EVENT_NAMES = _EventNames()


def _without_comments(lines: list[bytes], eol: int) -> tuple[list[bytes], list[int]] | None:
    """``lines`` (a whole body's, ending with a blank line) without the frames of one
    comment line alone, and each other frame's byte offset; None where a comment shares a
    frame with fields, or a frame is empty (the decoder's way), or no other frame is left.
    Python per line, but only for the few captures that have comments."""
    kept: list[bytes] = []
    starts: list[int] = []
    at = i = 0
    while i < len(lines):
        line = lines[i]
        if line[:1] == b":":
            if lines[i + 1]:  # (the list ends with a blank line, so i + 1 exists)
                return None
            at += len(line) + 2 * eol
            i += 2
            continue
        end = lines.index(b"", i)
        if end == i:
            return None
        frame = lines[i:end + 1]
        if any(field[:1] == b":" for field in frame):
            return None
        starts.append(at)
        at += sum(map(len, frame)) + len(frame) * eol
        kept += frame
        i = end + 1
    return (kept, starts) if kept else None


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


# -- writing: the inverse of the decoder, and the one place the kit writes SSE ------------
# Each line of ``data`` becomes its own ``data:`` line, so the decoder joins them back with
# ``\n``. A ``\r`` or ``\r\n`` inside data is a line break too and comes back as ``\n``:
# SSE cannot carry it.
Newline = Literal["\n", "\r\n", "\r"]
DONE_DATA = "[DONE]"
"""The data of OpenAI Chat's last frame (``data: [DONE]``), which is not JSON."""

def _lines(text: str) -> list[str]:
    """``text`` split at every SSE line break (CRLF, LF or CR)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def _one_line(field: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(f"an SSE {field} field cannot hold a line break: {value!r}")
    return value


def sse_frame(
    data: str | None,
    event: str | None = None,
    *,
    id: str | None = None,  # the field's name in the spec
    retry: int | None = None,
    comment: str | None = None,
    newline: Newline = "\n",
) -> str:
    """One SSE frame: optional comment, ``event``, ``id`` and ``retry`` lines, then ``data``.

    ``data`` is split at every line break into one ``data:`` line each; ``None`` writes no
    data line (a frame of only an id, a retry or a comment, which dispatches nothing). The
    frame ends with a blank line; every line ends with ``newline``.
    """
    lines: list[str] = []
    if comment is not None:
        lines += [f": {c}" if c else ":" for c in _lines(comment)]
    if event is not None:
        lines.append(f"event: {_one_line('event', event)}")
    if id is not None:
        if "\0" in id:
            raise ValueError("an SSE id cannot hold NUL: the decoder would ignore it")
        lines.append(f"id: {_one_line('id', id)}")
    if retry is not None:
        if retry < 0:
            raise ValueError(f"an SSE retry is a count of milliseconds, not {retry}")
        lines.append(f"retry: {retry}")
    if data is not None:
        lines += [f"data: {line}" if line else "data:" for line in _lines(data)]
    if not lines:
        raise ValueError("an SSE frame needs at least one field or comment")
    return newline.join(lines) + newline * 2


def json_data(payload: Any) -> str:
    """A payload as the APIs write a data line: compact JSON, UTF-8, keys in the order given."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def sse_body(frames: Iterable[str]) -> bytes:
    """Frames written by :func:`sse_frame` (or any text) as the UTF-8 bytes of a capture."""
    return "".join(frames).encode("utf-8")




# -- the registry's declaration: writing frames, re-framing, serving ----------------------
def frames(written: Sequence[Written], *, newline: Newline = "\n", events: bool = True,
           ids: bool = False) -> list[bytes]:
    """Each frame as its own SSE block (one server write each): ``events=False`` leaves out
    the ``event:`` lines, ``ids`` gives every event an ``id:`` and a keep-alive after it."""
    out = []
    for n, f in enumerate(written):
        block = sse_frame(f.text, f.event if events else None, id=str(n) if ids else None,
                          newline=newline)
        if ids:
            block += sse_frame(None, comment="keep-alive", newline=newline)
        out.append(block.encode("utf-8"))
    return out


def _comments(written: Sequence[Written], keepalive: Written | None) -> tuple[bytes, ...]:
    """A keep-alive comment block first, the format's own keep-alive event (Anthropic's
    ``ping``) after the first frame, comment lines inside events, comment blocks between."""
    first = written[0]
    out = [sse_frame(None, comment="keep-alive"), sse_frame(first.text, first.event)]
    if keepalive is not None:
        out.append(sse_frame(keepalive.text, keepalive.event))
    for n, f in enumerate(written[1:]):
        out.append(sse_frame(f.text, f.event, comment="" if n % 2 else "still here"))
        if n % 3 == 0:
            out.append(sse_frame(None, comment="ping"))
    return tuple(b.encode("utf-8") for b in out)


def _retry(written: Sequence[Written]) -> tuple[bytes, ...]:
    """A block holding only ``retry:`` first (it dispatches nothing), one inside an event."""
    first = written[0]
    out = [sse_frame(None, retry=3000), sse_frame(first.text, first.event)]
    out += [sse_frame(f.text, f.event, retry=1000 if n == 0 else None)
            for n, f in enumerate(written[1:])]
    return tuple(b.encode("utf-8") for b in out)


def _transports(written: Sequence[Written], served: Served) -> Iterator[Transport]:
    yield from crlf_cases(written, lambda w, nl: frames(w, newline=nl))  # type: ignore[arg-type]
    yield Transport("cr", "CR line ends", (b"".join(frames(written, newline="\r")),))
    yield Transport("comments", "comment lines and pings between and inside events",
                    _comments(written, served.keepalive))
    yield Transport("retry_field", "a block holding only 'retry: 3000' before the first event",
                    _retry(written))
    yield Transport("ids_and_keepalive", "'id: N' on every event, a ': keep-alive' comment "
                    "block after each", tuple(frames(written, ids=True)))
    if any(f.event for f in written):  # the harness serves it where the format allows
        yield Transport("no_event_lines", "no 'event:' lines: every event's type only in its "
                        "data (a valid stream: the SSE event type is then 'message')",
                        (b"".join(frames(written, events=False)),))


_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n)")


def _field_lines(body: bytes) -> Iterator[tuple[int, int, int, int]]:
    """Each line of an SSE body as (start, end, end of field name, start of value); a
    leading BOM is not part of the first line."""
    pos = 3 if body.startswith(_BOM) else 0
    n = len(body)
    while pos < n:
        m = _LINE.match(body, pos)
        start, end = (m.start(1), m.end(1)) if m else (pos, n)
        if end > start:
            colon = body.find(b":", start, end)
            if colon < 0:
                yield start, end, end, end
            else:
                value = colon + 1 + (body[colon + 1 : colon + 2] == b" ")
                yield start, end, colon, min(value, end)
        pos = m.end() if m else n


def data_spans(body: bytes, start: int, end: int, tail: bool = False) -> list[tuple[int, int]]:
    """Byte spans of the values of the ``data`` lines in ``body[start:end]``.

    ``tail``: also the last line when no line end closes it (a truncated capture).
    """
    lines, pos = [], start
    if start == 0 and body.startswith(_BOM):
        pos = start = 3  # the BOM is not part of the first field name
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


def rewrite(body: bytes, source: str, values: Values) -> bytes:
    """Every frame's data redacted where its ``data:`` lines stand, then every other line:
    a data line no frame dispatched, a comment, an ``id``, a ``retry`` that is no number,
    and a line that is no field (filler: every reader ignores it)."""
    out = bytearray(body)
    dec = SSEDecoder(strict=False)
    done: set[int] = set()  # starts of the data lines redacted frame by frame
    whole = 0
    for fr in dec.feed(body) + dec.close():
        if fr.problem is not None or fr.end <= fr.offset:
            continue
        whole += 1
        spans = data_spans(body, fr.offset, fr.end)
        pieces = values.data(fr.data, fr.event).split("\n")
        if len(pieces) == len(spans):
            for (a, b), piece in zip(spans, pieces, strict=True):
                out[a:b] = same_size(piece, b - a)
                done.add(a)
    if not whole:
        raise CaptureError(source, 0, "not an event stream: no complete SSE frame (JSON, HAR, "
                                      "binary, or a stream cut in its first frame)")
    for start, end, field_end, value in _field_lines(body):
        name = body[start:field_end]
        text = as_text(body[value:end])
        if name == b"data":
            if value not in done:
                out[value:end] = same_size(values.data(text, EVENT), end - value)
        elif name == b"":
            out[value:end] = same_size(values.comment(text), end - value)
        elif name == b"id":
            out[value:end] = same_size(values.ident(text), end - value)
        elif name == b"retry":
            if not body[value:end].isdigit():
                out[value:end] = same_size(values.filler(text), end - value)
        elif name != b"event":  # not a field: every reader ignores it, so it is filler
            out[start:end] = same_size(values.filler(as_text(body[start:end])), end - start)
    return bytes(out)


def _always(head: bytes) -> bool:
    """SSE is what a capture is when it is no other framing (the chain's last)."""
    return True


FRAMING = Framing(
    name="sse", media_type="text/event-stream",
    served_type="text/event-stream; charset=utf-8", decoder=SSEDecoder,
    detect=_always, pieces=frames, rewrite=rewrite, transports=_transports, events=True)
"""Server-sent events, what most APIs stream."""
