"""AWS event-stream (``application/vnd.amazon.eventstream``), decoded from bytes into frames.

The framing Bedrock's ConverseStream answers in, as AWS documents it:
https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html
(and as botocore reads it: ``botocore/eventstream.py``, whose size limits this follows).

A message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes, each a
big-endian u32), the headers, the payload, and a CRC32 of every byte before it. A header is a
name (u8 length, UTF-8), a value type (u8) and a value the type sizes (:data:`HEADER_TYPES`).

:class:`EventStreamDecoder` gives the :class:`~.frame.Frame` tuples every framing gives, so
every layer above reads it: ``event`` is the ``:event-type`` header (``:exception-type`` for
an exception, which the format turns into an error row), ``data`` the payload as text.

Writing (:func:`encode_message` and its pieces) is the inverse: re-encoding a decoded message
with a changed payload gives a message with both CRCs recomputed.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple
from zlib import crc32

from ..errors import CaptureError
from .frame import Frame, FrameDecoder
from .spec import Framing, Served, Transport, Values, Written, as_text, cut, same_size

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
    return {name: value for name, _, value in typed_headers(raw, at)}


def typed_headers(raw: bytes, at: int = 0) -> list[tuple[str, int, HeaderValue]]:
    """A message's headers as ``(name, value type code, value)``, in their order."""
    out: list[tuple[str, int, HeaderValue]] = []
    seen: set[str] = set()
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
        if name in seen:
            raise HeaderError(at + start, f"duplicate header {name!r}")
        seen.add(name)
        out.append((name, kind, value))
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
            off = where  # the frame sits at the byte, as strict says
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


# -- writing: the inverse of the decoder (both CRCs computed) -------------------------------
class Typed(NamedTuple):
    """A header value with its wire type forced (``kind`` is a code of ``HEADER_TYPES``)."""

    kind: int
    value: HeaderValue | datetime


_INTS = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}


def _kind(value: HeaderValue | datetime) -> int:
    """The type a value is written as when not forced: an int as int32, or int64 if bigger."""
    if isinstance(value, bool):
        return 0 if value else 1
    if isinstance(value, int):
        return 4 if -(2**31) <= value < 2**31 else 5
    if isinstance(value, bytes):
        return 6
    if isinstance(value, str):
        return 7
    if isinstance(value, datetime):
        return 8
    if isinstance(value, uuid.UUID):
        return 9
    raise TypeError(f"no event-stream header type for {type(value).__name__}")


def encode_header(name: str, value: HeaderValue | datetime | Typed) -> bytes:
    """One header: name length, name, value type, value (length-prefixed for bytes/strings)."""
    raw_name = name.encode("utf-8")
    if not 0 < len(raw_name) < 256:
        raise ValueError(f"a header name is 1-255 bytes of UTF-8, not {len(raw_name)}: {name!r}")
    kind, value = (value.kind, value.value) if isinstance(value, Typed) else (_kind(value), value)
    head = bytes([len(raw_name)]) + raw_name + bytes([kind])
    if kind in (0, 1):
        if value is not (kind == 0):
            raise ValueError(f"header {name!r}: type {kind} is the value {kind == 0}, "
                             f"not {value!r}")
        return head
    if kind == 8 and isinstance(value, datetime):
        value = round(value.timestamp() * 1000)
    if kind in _INTS and isinstance(value, int) and not isinstance(value, bool):
        try:
            return head + struct.pack(_INTS[kind], value)
        except struct.error:
            raise ValueError(f"header {name!r}: {value} does not fit type {kind}") from None
    if kind in (6, 7) and isinstance(value, bytes | str):
        body = value.encode("utf-8") if isinstance(value, str) else value
        if (kind == 7) != isinstance(value, str) or len(body) > 0xFFFF:
            raise ValueError(f"header {name!r}: type {kind} takes at most 65535 "
                             f"{'UTF-8 ' if kind == 7 else ''}bytes, not {value!r:.60}")
        return head + struct.pack(">H", len(body)) + body
    if kind == 9 and isinstance(value, uuid.UUID):
        return head + value.bytes
    raise ValueError(f"header {name!r}: {value!r:.60} cannot be written as type {kind}")


def encode_headers(headers: Mapping[str, HeaderValue | datetime | Typed]) -> bytes:
    """A message's headers section, in the mapping's order."""
    return b"".join(encode_header(name, value) for name, value in headers.items())


def encode_message(headers: Mapping[str, HeaderValue | datetime | Typed] | bytes,
                   payload: bytes) -> bytes:
    """One event-stream message with both CRCs computed.

    ``headers`` is a mapping (as :func:`~.eventstream.parse_headers` returns; ints are
    written as int32/int64 unless given as :class:`Typed`) or an already-encoded headers
    section, kept byte for byte (what re-encoding a redacted payload wants).
    """
    raw = headers if isinstance(headers, bytes) else encode_headers(headers)
    if len(raw) > MAX_HEADERS or len(payload) > MAX_PAYLOAD:
        raise ValueError(f"headers ({len(raw)} bytes) or payload ({len(payload)} bytes) past "
                         f"the limits the decoders accept ({MAX_HEADERS}, {MAX_PAYLOAD})")
    prelude = struct.pack(">II", PRELUDE + len(raw) + len(payload) + 4, len(raw))
    body = prelude + struct.pack(">I", crc32(prelude)) + raw + payload
    return body + struct.pack(">I", crc32(body))


def event_message(event_type: str, payload: bytes | str,
                  content_type: str = "application/json") -> bytes:
    """An ``event`` message, with the headers Bedrock sends."""
    raw = payload.encode("utf-8") if isinstance(payload, str) else payload
    return encode_message({":event-type": event_type, ":content-type": content_type,
                           ":message-type": "event"}, raw)


def exception_message(exception_type: str, payload: bytes | str) -> bytes:
    """An ``exception`` message (a modelled error such as ``throttlingException``)."""
    raw = payload.encode("utf-8") if isinstance(payload, str) else payload
    return encode_message({":exception-type": exception_type,
                           ":content-type": "application/json",
                           ":message-type": "exception"}, raw)


# -- showing: a message as a reader can read it -----------------------------------------------
def _shown_value(value: HeaderValue) -> str:
    if isinstance(value, bytes):
        return f"0x{value[:32].hex()}" + ("…" if len(value) > 32 else "") + f" ({len(value)} bytes)"
    return str(value)


def describe(raw: bytes) -> str:
    """One message's bytes as text a person reads: its sizes, whether both CRCs hold, each
    header as ``name (type) = value``, and the payload as UTF-8 (U+FFFD where it is not).

    Bytes that are no sound message (a broken prelude, a message cut short) are said to be
    so and shown in hex, never decoded as text (the prelude and the CRCs would be mojibake).
    """
    def hexed(why: str) -> str:
        head = raw[:64].hex(" ")
        return f"{why}; its first bytes in hex:\n{head}" + (" …" if len(raw) > 64 else "")

    if len(raw) < PRELUDE + 4:
        return hexed(f"{len(raw)} bytes: too few for an event-stream message")
    total, hlen, crc = _PRELUDE.unpack_from(raw)
    broken = _broken_prelude(raw[:8], total, hlen, crc)
    if broken is not None:
        return hexed(f"not a sound event-stream message: {broken}")
    if len(raw) != total:
        return hexed(f"{len(raw)} bytes where the prelude says {total}: not one whole message")
    recorded, computed = int.from_bytes(raw[-4:]), crc32(raw[:-4])
    crcs = "both CRCs hold" if recorded == computed else (
        f"message CRC mismatch (recorded 0x{recorded:08x}, computed 0x{computed:08x})")
    lines = [f"event-stream message: {total} bytes (prelude {PRELUDE}, headers {hlen}, "
             f"payload {total - PRELUDE - hlen - 4}, CRC 4); {crcs}"]
    try:
        headers = typed_headers(raw[PRELUDE:PRELUDE + hlen], PRELUDE)
    except HeaderError as e:
        lines.append(f"headers unreadable at byte {e.offset} of the message: {e.reason}")
        return "\n".join(lines)
    lines += [f"{name} ({HEADER_TYPES[kind]}) = {_shown_value(value)}"
              for name, kind, value in headers]
    payload = raw[PRELUDE + hlen:-4]
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as e:
        text = payload.decode("utf-8", "replace")
        lines.append(f"payload (not UTF-8 from its byte {e.start}; U+FFFD marks each bad byte):")
    else:
        lines.append("payload:")
    lines.append(text)
    return "\n".join(lines)



# -- writing, re-framing, serving ---------------------------------------------------------
def messages(frames: Sequence[Written]) -> list[bytes]:
    """Each frame an ``event`` message (its event the ``:event-type``), one write each."""
    return [event_message(f.event or "", f.text) for f in frames]


def event_type(raw: bytes) -> str:
    """An encoded headers section's event name (its ``:event-type`` or ``:exception-type``);
    empty when it names none or cannot be read."""
    try:
        headers = parse_headers(raw)
    except (ValueError, IndexError):
        return ""
    name = headers.get(":event-type", headers.get(":exception-type", ""))
    return name if isinstance(name, str) else ""


def rewrite(body: bytes, source: str, values: Values) -> bytes:
    """Headers and payload redacted in place, each message's CRC recomputed (a CRC that was
    wrong stays wrong by the same difference)."""
    out = bytearray(body)
    at = 0
    while at + PRELUDE <= len(body):
        total, hlen, head_crc = _PRELUDE.unpack_from(body, at)
        if (total < PRELUDE + 4 or hlen > total - PRELUDE - 4 or at + total > len(body)
                or crc32(body[at : at + 8]) != head_crc):
            break  # decoding stops here too: the rest is a damaged tail
        heads = at + PRELUDE
        payload = heads + hlen
        end = at + total - 4
        text = as_text(body[payload:end])
        redacted = values.data(text, event_type(body[heads:payload]))
        message = bytearray(encode_message(values.headers(body[heads:payload]),
                                           same_size(redacted, end - payload)))
        stored = struct.unpack_from(">I", body, end)[0]
        wrong = crc32(body[at:end]) ^ stored  # 0 unless the capture's CRC was wrong
        struct.pack_into(">I", message, total - 4, crc32(message[:-4]) ^ wrong)
        out[at : at + total] = message
        at += total
    if at == 0:
        raise CaptureError(source, 0, "not an AWS event-stream: no complete message (cut in "
                                      "its first message?)")
    if at < len(body):  # a message cut short: its lengths kept, every other byte filler
        keep = min(len(body), at + PRELUDE)
        out[keep:] = b"x" * (len(body) - keep)
    return bytes(out)


def _transports(frames: Sequence[Written], served: Served) -> Iterator[Transport]:
    pieces = messages(frames)
    body = b"".join(pieces)
    starts = [0]
    for p in pieces[:-1]:
        starts.append(starts[-1] + len(p))
    inside = []
    for at, p in zip(starts, pieces, strict=True):
        hlen = _PRELUDE.unpack_from(p)[1]
        # in the prelude, after it, in the headers, in the payload, in the message CRC
        inside += [at + 5, at + PRELUDE, at + PRELUDE + hlen // 2,
                   at + (PRELUDE + hlen + len(p) - 4) // 2, at + len(p) - 2]
    yield Transport("message_split", "every message split across reads: in its prelude, after "
                    "it, in its headers, in its payload and in its CRC", cut(body, inside))
    yield Transport("messages_coalesced", "two messages and half a third in each read",
                    cut(body, [a + len(p) // 2 for a, p in zip(starts[2::3], pieces[2::3],
                                                                strict=True)]))


FRAMING = Framing(
    name="eventstream", media_type="application/vnd.amazon.eventstream",
    decoder=EventStreamDecoder, detect=is_eventstream, pieces=messages, rewrite=rewrite,
    transports=_transports, events=True)
"""AWS event-stream, as Bedrock answers."""
