"""Writing captures: SSE frames and AWS event-stream messages, the inverse of the decoders.

Every piece of the kit that writes a stream (the check suite, the generator, the tests'
turns, redaction of event-stream captures) writes it here, so a framing rule lives once.

SSE follows the WHATWG rules :class:`~.sse.SSEDecoder` reads
(https://html.spec.whatwg.org/multipage/server-sent-events.html): each line of ``data``
becomes its own ``data:`` line, so the decoder joins them back with ``\\n``. A ``\\r`` or
``\\r\\n`` inside data is a line break too and comes back as ``\\n``: SSE cannot carry it.

Event-stream follows AWS's encoding (https://docs.aws.amazon.com/lexv2/latest/dg/
event-stream-encoding.html), the inverse of :mod:`~.eventstream`: a 12-byte prelude (total
length, headers length, CRC32 of those 8 bytes), the headers, the payload, and a CRC32 of
everything before it. Re-encoding a decoded message with a changed payload gives a message
with both CRCs recomputed.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal, NamedTuple
from zlib import crc32

from .eventstream import MAX_HEADERS, MAX_PAYLOAD, PRELUDE, HeaderValue

Newline = Literal["\n", "\r\n", "\r"]


# -- SSE -----------------------------------------------------------------------------------
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


def sse_body(frames: Iterable[str]) -> bytes:
    """Frames written by :func:`sse_frame` (or any text) as the UTF-8 bytes of a capture."""
    return "".join(frames).encode("utf-8")


# -- AWS event-stream ----------------------------------------------------------------------
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
