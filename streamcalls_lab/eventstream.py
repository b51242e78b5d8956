"""AWS event-stream (``application/vnd.amazon.eventstream``), decoded from bytes into frames.

The framing Bedrock's ConverseStream answers in, as AWS documents it:
https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html
(and as botocore reads it: ``botocore/eventstream.py``, whose size limits this follows).

A message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes, each a
big-endian u32), the headers, the payload, and a CRC32 of every byte before it. A header is a
name (u8 length, UTF-8), a value type (u8) and a value the type sizes (:data:`HEADER_TYPES`).

:class:`EventStreamDecoder` gives the :class:`~.sse.Frame` tuples :class:`~.sse.SSEDecoder`
gives, so every layer above reads both framings: ``event`` is the ``:event-type`` header
(``:exception-type`` for an exception, which the format turns into an error row), ``data``
the payload as text. :class:`AutoDecoder` is the one place that chooses the framing of a
capture (this one, SSE or NDJSON), from its first bytes.
"""

from __future__ import annotations

import math
import struct
import uuid
from collections.abc import Iterable, Iterator
from zlib import crc32

from .errors import CaptureError
from .jsonarray import JSONArrayDecoder, opens_array
from .ndjson import NDJSONDecoder, looks_like_ndjson
from .sse import Frame, FrameDecoder, SSEDecoder, decode_frames

PRELUDE = 12
"""Bytes before the headers: total length, headers length, prelude CRC."""
MAX_HEADERS = 128 * 1024
MAX_PAYLOAD = 16 * 1024**2
"""botocore's limits: a length past them is taken as corruption, not waited for."""
HEADER_TYPES = {
    0: "bool true", 1: "bool false", 2: "byte", 3: "short", 4: "int", 5: "long",
    6: "bytes", 7: "string", 8: "timestamp", 9: "uuid",
}
_SIGNED = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8}  # value type -> size of its big-endian integer
_PRELUDE = struct.Struct(">III")
_new = tuple.__new__

HeaderValue = bool | int | bytes | str | uuid.UUID
"""A header's value: integers for types 2-5 and 8 (a timestamp is milliseconds since 1970)."""


class HeaderError(ValueError):
    """Headers that cannot be read; ``offset`` is where, in the capture."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


def parse_headers(raw: bytes, at: int = 0) -> dict[str, HeaderValue]:
    """A message's headers section as a dict; ``at`` is its offset, for the error."""
    out: dict[str, HeaderValue] = {}
    i, n = 0, len(raw)

    def take(size: int, what: str) -> bytes:
        nonlocal i
        if i + size > n:
            raise HeaderError(at + i, f"{what} runs past the end of the headers ({n} bytes)")
        i += size
        return raw[i - size : i]

    while i < n:
        start = i
        name_bytes = take(take(1, "a header name length")[0], "a header name")
        name = _utf8(name_bytes, at + start + 1, "header name")
        kind = take(1, f"the value type of header {name!r}")[0]
        value: HeaderValue
        if kind in (0, 1):
            value = kind == 0
        elif kind in _SIGNED:
            value = int.from_bytes(take(_SIGNED[kind], f"header {name!r}"), signed=True)
        elif kind in (6, 7):
            size = int.from_bytes(take(2, f"the value length of header {name!r}"))
            body = take(size, f"header {name!r}")
            value = body if kind == 6 else _utf8(body, at + i - size, f"header {name!r}")
        elif kind == 9:
            value = uuid.UUID(bytes=take(16, f"header {name!r}"))
        else:
            raise HeaderError(at + i - 1, f"unknown header value type {kind} in header {name!r}"
                                          " (AWS defines 0-9)")
        if name in out:
            raise HeaderError(at + start, f"duplicate header {name!r}")
        out[name] = value
    return out


def _utf8(raw: bytes, at: int, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HeaderError(at + e.start, f"invalid UTF-8 in {what} "
                                        f"(byte 0x{raw[e.start]:02x} at {at + e.start})") from None


def is_eventstream(first: bytes) -> bool:
    """Whether a capture whose first byte is ``first`` is AWS event-stream rather than SSE.

    That byte is the top byte of the first message's length, so 0 or 1 within the limits
    above; text never starts with a NUL or SOH. The prelude CRC then confirms it (a
    mismatch is reported as a broken prelude), and everything else is read as SSE.
    """
    return first[:1] in (b"\0", b"\1")


class EventStreamDecoder(FrameDecoder):
    """Feed bytes in any chunking; get the same frames (the interface of ``SSEDecoder``).

    ``strict=True`` raises :class:`CaptureError` at the first problem; ``strict=False``
    returns it as a frame whose ``problem`` is set. A message whose prelude is sound but
    whose content is not (message CRC, headers) is reported and skipped, and decoding goes
    on after it. A broken prelude (its CRC, lengths that do not add up) loses every later
    boundary: it is reported once and nothing after it is read.
    """

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        super().__init__(source, strict=strict)
        self._buf = bytearray()
        self._pos = 0  # absolute offset of _buf[0]
        self._stopped = False

    # -- internals --------------------------------------------------------------
    def _read(self, chunk: bytes) -> None:
        if not self._stopped:
            self._buf += chunk
            self._messages()

    def _end(self) -> None:
        """A message cut short is reported, never emitted."""
        have = len(self._buf)
        if have and not self._stopped:
            if have < PRELUDE:
                size = f"{have} bytes, fewer than the {PRELUDE} of a prelude"
            else:
                size = f"{have} of its {_PRELUDE.unpack_from(self._buf)[0]} bytes"
            self._problem(self._pos, self._pos + have,
                          f"stream ends inside a message: {size} (truncated capture?)")
        self._buf = bytearray()
        self._stopped = True

    def _messages(self) -> None:
        """Decode every complete message in the buffer; keep the rest."""
        buf = self._buf
        at, n = 0, len(buf)
        while n - at >= PRELUDE:
            total, hlen, crc = _PRELUDE.unpack_from(buf, at)
            off = self._pos + at
            broken = _broken_prelude(buf[at : at + 8], total, hlen, crc)
            if broken is not None:
                self._stopped = True
                self._buf = bytearray()
                self._problem(off, self._pos + n, f"{broken}: the message boundaries after it "
                              "are lost, so decoding stops here and no later byte is read")
                return
            if n - at < total:
                break
            self._message(bytes(buf[at : at + total]), off, hlen)
            at += total
        del buf[:at]
        self._pos += at

    def _message(self, msg: bytes, off: int, hlen: int) -> None:
        end = off + len(msg)
        recorded, computed = int.from_bytes(msg[-4:]), crc32(msg[:-4])
        if recorded != computed:
            self._problem(off, end, f"message CRC mismatch (recorded 0x{recorded:08x}, computed "
                          f"0x{computed:08x}): the message is corrupt and is skipped; its "
                          "prelude is sound, so decoding goes on after it")
            return
        try:
            headers = parse_headers(msg[PRELUDE : PRELUDE + hlen], off + PRELUDE)
        except HeaderError as e:
            self._problem(e.offset, end, f"{e.reason}: the message is skipped; its prelude is "
                          "sound, so decoding goes on after it")
            return
        kind = headers.get(":message-type", "event")
        name_header = {"event": ":event-type", "exception": ":exception-type"}.get(str(kind))
        if name_header is None:
            if kind == "error":  # the transport's own error channel: code and text in headers
                code, text = headers.get(":error-code"), headers.get(":error-message")
                self._problem(off, end, f"AWS error message: {code}: {text}", str(code))
            else:
                self._problem(off, end, f"unknown :message-type {kind!r} (AWS defines event, "
                              "exception and error)")
            return
        event = headers.get(name_header)
        if type(event) is not str:
            self._problem(off, end, f"a message of type {kind} without a string {name_header} "
                          "header")
            return
        payload = msg[PRELUDE + hlen : -4]
        problem = None
        try:
            data = payload.decode("utf-8")
        except UnicodeDecodeError as e:
            data = payload.decode("utf-8", "replace")
            where = off + PRELUDE + hlen + e.start
            problem = f"invalid UTF-8 in payload (byte 0x{payload[e.start]:02x} at {where})"
            if self.strict:
                raise CaptureError(self.source, where, problem) from None
        self._out.append(_new(Frame, (off, end, event, data, "", None, self._t, problem)))


def _broken_prelude(head: bytes | bytearray, total: int, hlen: int, crc: int) -> str | None:
    """Why a prelude cannot be trusted, or None when it can."""
    computed = crc32(head)
    if computed != crc:
        return f"prelude CRC mismatch (recorded 0x{crc:08x}, computed 0x{computed:08x})"
    if total < PRELUDE + hlen + 4:
        return (f"lengths do not add up: a {total}-byte message cannot hold the {PRELUDE}-byte "
                f"prelude, {hlen} bytes of headers and the 4-byte CRC")
    if hlen > MAX_HEADERS:
        return f"headers length {hlen} exceeds the {MAX_HEADERS}-byte maximum"
    if total - hlen - PRELUDE - 4 > MAX_PAYLOAD:
        return f"payload length {total - hlen - PRELUDE - 4} exceeds the {MAX_PAYLOAD}-byte maximum"
    return None


class AutoDecoder:
    """SSE, AWS event-stream, NDJSON or a streamed JSON array, chosen from the start of a capture.

    Event-stream when its first byte is 0 or 1 (:func:`is_eventstream`); NDJSON when its
    first byte that is not whitespace opens a JSON object, a JSON array (Gemini without
    ``?alt=sse``) when it opens an array (:func:`~.ndjson.looks_like_ndjson`: an SSE line
    starts with a field name or a colon, never ``{`` or ``[``); SSE otherwise. Only a
    leading run of whitespace is held back until the choice is made, and it holds no frame,
    so every frame comes out of the chosen decoder exactly when it would have.
    """

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        self.source = source
        self.strict = strict
        self.decoder: FrameDecoder | None = None
        self._held = b""

    def feed(self, chunk: bytes, t: float = math.nan) -> list[Frame]:
        dec = self.decoder
        if dec is None:
            if not chunk:
                return []
            head = self._held + chunk
            if is_eventstream(head[:1]):
                dec = self._choose(EventStreamDecoder)
            else:
                ndjson = looks_like_ndjson(head)
                if ndjson is None:
                    self._held = head
                    return []
                if not ndjson:
                    dec = self._choose(SSEDecoder)
                else:
                    dec = self._choose(JSONArrayDecoder if opens_array(head) else NDJSONDecoder)
            chunk, self._held = head, b""
        return dec.feed(chunk, t)

    def close(self) -> list[Frame]:
        dec = self.decoder
        if dec is None:  # empty, or whitespace alone: SSE says what is wrong with it
            dec = self._choose(SSEDecoder)
            if self._held:
                out = dec.feed(self._held)
                return out + dec.close()
        return dec.close()

    def _choose(self, framing: type[FrameDecoder]) -> FrameDecoder:
        self.decoder = framing(self.source, strict=self.strict)
        return self.decoder


def decode_any(
    chunks: Iterable[bytes | tuple[float, bytes]], source: str = "<bytes>", *, strict: bool = True
) -> Iterator[Frame]:
    """:func:`~.sse.decode_frames` with the framing chosen by :class:`AutoDecoder`."""
    return decode_frames(chunks, source, strict=strict, framing=AutoDecoder)
