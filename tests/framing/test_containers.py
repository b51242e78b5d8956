"""Each framing refuses, in strict mode, what it cannot read: a ``CaptureError`` naming the byte
and the reason. What lenient mode makes of each problem is in the framing's own test module."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from streamcalls_lab import CaptureError
from streamcalls_lab.framing.ndjson import NDJSONDecoder
from streamcalls_lab.framing.sse import decode_frames

from ..support.eventstream_turns import decode


def sse(body: bytes) -> list:
    return list(decode_frames([body]))


def ndjson(body: bytes) -> list:
    """The NDJSON framing on its own (the loader reads a JSON array with another framing)."""
    return list(decode_frames([body], framing=NDJSONDecoder))


def eventstream(body: bytes) -> list:
    return decode(body)


REFUSED = {  # each framing: what it cannot read, as (the body, what the error says)
    sse: {
        "an empty capture": (b"", "byte 0: empty capture"),
        "a final block without its blank line": (
            b"data: a\n\ndata: b", r"byte 9: stream ends inside a frame"),
        "a line that is no field": (
            b"data: a\n\n<html>\n\n", r"byte 9: not an SSE field line: '<html>'"),
        "a NUL byte is binary": (b"\x89PNG\r\n\x1a\n\0\0\0", "binary data"),
        "invalid UTF-8 in data names the byte": (
            b"data: a\xff\n\n", r"byte 7: invalid UTF-8 in data \(byte 0xff"),
        "a retry of thousands of digits": (
            b"retry: " + b"9" * 5000 + b"\ndata: x\n\n", r"byte 7: retry: a value of 5000 digits"),
    },
    ndjson: {
        "a last line cut short": (b'{}\n{"do', r"byte 3: stream ends inside a line"),
        "invalid UTF-8": (b'{}\n{"a":"\xff"}\n', r"byte 9: invalid UTF-8"),
        "a NUL byte is binary": (b'{}\n{\0}\n', r"byte 4: binary data"),
        "a JSON array is gemini without alt=sse": (
            b'[{\r\n  "candidates": []\r\n}\r\n,\r\n{"candidates": []}]',
            r"byte 0: a JSON array.*without \?alt=sse"),
    },
    eventstream: {
        "an empty capture": (b"", "empty capture"),
    },
}
CASES = {f"{framing.__name__}: {name}": (framing, body, reason)
         for framing, cases in REFUSED.items() for name, (body, reason) in cases.items()}


@pytest.mark.parametrize(("framing", "body", "reason"), CASES.values(), ids=CASES)
def test_strict_mode_raises_naming_the_byte_and_the_reason(
    framing: Callable[[bytes], list], body: bytes, reason: str,
) -> None:
    with pytest.raises(CaptureError, match=reason):
        framing(body)
