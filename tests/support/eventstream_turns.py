"""AWS event-stream messages for the tests, written by the library encoder.

Sound messages come from :mod:`streamcalls_lab.encode` (checked against botocore in
``test_encode.py``); ``header``, ``string`` and ``frame`` also write what the encoder refuses
(unknown value types, strings that are not UTF-8, lengths and CRCs forced to lie), which is
what the decoder's problem tests feed it.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from streamcalls_lab.framing.eventstream import EventStreamDecoder, encode_headers, encode_message

from ..conftest import CAPTURES

F = TypeVar("F", bound=Callable[..., Any])


def header(name: str, kind: int, value: bytes = b"") -> bytes:
    """One header: the value already encoded as the type wants it (length prefix included)."""
    raw = name.encode()
    return bytes([len(raw)]) + raw + bytes([kind]) + value


def string(name: str, value: str | bytes) -> bytes:
    """A string header; ``bytes`` are written as they are, UTF-8 or not."""
    raw = value.encode() if isinstance(value, str) else value
    return header(name, 7, struct.pack(">H", len(raw)) + raw)


def frame(headers: bytes, payload: bytes, *, total: int | None = None,
          prelude_crc: int | None = None, message_crc: int | None = None) -> bytes:
    """A message with the given headers section and payload; any field may be forced."""
    if total is None and prelude_crc is None and message_crc is None:
        return encode_message(headers, payload)
    size = 16 + len(headers) + len(payload) if total is None else total
    prelude = struct.pack(">II", size, len(headers))
    crc = zlib.crc32(prelude) if prelude_crc is None else prelude_crc
    body = prelude + struct.pack(">I", crc) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body) if message_crc is None else message_crc)


def event(name: str, payload: str | bytes = "{}", *, extra: bytes = b"") -> bytes:
    """An event message with Bedrock's headers; ``extra`` raw headers follow them."""
    raw = payload.encode() if isinstance(payload, str) else payload
    heads = encode_headers({":event-type": name, ":content-type": "application/json",
                            ":message-type": "event"})
    return encode_message(heads + extra, raw)


def exception(kind: str, message: str) -> bytes:
    heads = encode_headers({":exception-type": kind, ":message-type": "exception"})
    return encode_message(heads, json.dumps({"message": message}).encode())


REAL = sorted((CAPTURES / "bedrock").glob("*.eventstream"))
"""The real Bedrock captures."""


def real(test: F) -> F:
    """A test of the real Bedrock captures: marked as reading them, skipped without them."""
    skip = pytest.mark.skipif(not REAL, reason="real Bedrock captures not available")
    return pytest.mark.captures(skip(test))


def each_real(test: F) -> F:
    """A test run once per real Bedrock capture, given as ``path``."""
    return real(pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:80])(test))


def decode(body: bytes, *, strict: bool = True) -> list:
    """Every frame of an event-stream body, problems included when lenient."""
    dec = EventStreamDecoder(strict=strict)
    return dec.feed(body) + dec.close()
