"""Newline-delimited JSON (``application/x-ndjson``), decoded from bytes into frames.

The framing Ollama's native API streams in (https://github.com/ollama/ollama/blob/main/docs/api.md):
one JSON object per line, each line ended by ``\\n`` (https://github.com/ndjson/ndjson-spec).

:class:`NDJSONDecoder` gives the :class:`~.sse.Frame` tuples :class:`~.sse.SSEDecoder` gives, so
every layer above reads this framing too: ``offset`` and ``end`` bound the line (its line end
included), ``data`` is the line's text, ``event`` is :data:`EVENT` (the framing names no
events). A blank line carries nothing and, as between SSE frames, is skipped. Whether a line
is JSON is checked where every framing's data is parsed (``decode.EventDecoder``); here, what
only the bytes show: invalid UTF-8, a NUL byte, a last line that is cut short, and a capture
that is one JSON document rather than a stream (an array, or a pretty-printed object), which
is reported once, saying what it looks like, and not read further.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from ..errors import CaptureError
from .frame import BOM, Frame, LineDecoder
from .spec import Framing, Served, Transport, Values, Written, as_text, crlf_cases, same_size

EVENT = "line"
"""The ``event`` of every NDJSON frame."""
_new = tuple.__new__


def looks_like_ndjson(head: bytes) -> bool | None:
    """Whether a capture starting with ``head`` is JSON text rather than SSE: its first byte
    that is not whitespace (after a BOM) opens a JSON object or array. None while ``head``
    is all whitespace, which cannot tell yet."""
    rest = head[3:] if head.startswith(BOM) else head
    if BOM.startswith(head):
        return None  # a BOM still arriving
    stripped = rest.lstrip(b" \t\r\n")
    if not stripped:
        return None
    return stripped[:1] in (b"{", b"[")  # an array is read only to say what it is


def _not_a_stream(first: bytes) -> str | None:
    """Why a capture whose first line is ``first`` is one JSON document, not a stream."""
    if first.startswith(b"["):
        return ("a JSON array, not newline-delimited JSON or SSE: Gemini's "
                "streamGenerateContent answers so without ?alt=sse (jsonarray.JSONArrayDecoder "
                "reads it; load() chooses it by itself)")
    if first == b"{":
        return ("a pretty-printed JSON document (its first line is a lone '{'), not one JSON "
                "object per line: a saved response or a HAR export? (`python -m "
                "streamcalls_lab import` reads HAR files)")
    return None


class NDJSONDecoder(LineDecoder):
    """Feed bytes in any chunking; get one frame per non-blank line (``SSEDecoder``'s interface).

    ``strict=True`` raises :class:`CaptureError` at the first problem; ``strict=False`` gives
    it as a frame whose ``problem`` is set, and goes on with the next line.
    """

    _EVENT = EVENT

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        super().__init__(source, strict=strict)
        self._first = True  # no line with content yet

    # -- internals --------------------------------------------------------------
    def _content(self, body: bytes, at: int, end: int) -> None:
        if self._first:
            self._first = False
            why = _not_a_stream(body.strip(b" \t"))
            if why is not None:
                self._stopped = True
                self._problem(at, end, why + ": nothing after it is read")
                return
        if self._binary(body, at, end, "newline-delimited JSON"):
            return
        if (data := self._text(body, at, end)) is None:
            return
        self._out.append(_new(Frame, (at, end, EVENT, data, "", None, self._t, None)))


# -- writing, re-framing, serving ---------------------------------------------------------
LONG_LINE = 70_000
"""A line longer than 64 KiB, ``bufio.Scanner``'s default limit (Ollama's client raises its
own to 512 KiB; a reader that keeps the default fails on it)."""


def lines(frames: Sequence[Written], newline: str = "\n") -> list[bytes]:
    """Each frame's data on a line of its own (the data must hold no line break)."""
    out = []
    for f in frames:
        if "\n" in f.text or "\r" in f.text:
            raise ValueError("a line of NDJSON cannot carry a raw line break")
        out.append((f.text + newline).encode("utf-8"))
    return out


def padded(text: str, size: int) -> str:
    """JSON ``text`` made ``size`` characters long with whitespace before its last character
    (an object's or array's close), the same value to any JSON reader."""
    if text[-1:] not in ("}", "]"):
        return text + " " * (size - len(text))
    return text[:-1] + " " * (size - len(text)) + text[-1]


def line_cases(frames: Sequence[Written], write: Callable[[Sequence[Written], str], list[bytes]]
               ) -> Iterator[Transport]:
    """What every line framing may be served with (``write(frames, newline)``): CRLF line
    ends, blank lines between lines, and one line past 64 KiB."""
    yield from crlf_cases(frames, write)
    body = write(frames, "\n")
    blank = [b"\n" + piece + b" \t\n" for piece in body]
    yield Transport("blank_lines", "a blank line before every line, one of spaces and a tab "
                    "after it", tuple(blank))
    longest = max(range(len(frames)), key=lambda n: len(frames[n].text))
    long = [_Padded(f, LONG_LINE) if n == longest else f for n, f in enumerate(frames)]
    yield Transport("long_line", f"one line of {LONG_LINE:,} bytes (JSON whitespace before "
                    "its close): past bufio.Scanner's 64 KiB default", tuple(write(long, "\n")))


class _Padded:
    """A frame whose data is padded with JSON whitespace to ``size`` characters."""

    def __init__(self, frame: Written, size: int) -> None:
        self.event, self.text = frame.event, padded(frame.text, size)


def rewrite(body: bytes, source: str, values: Values) -> bytes:
    """One JSON value a line, each redacted like an SSE ``data`` payload."""
    out = bytearray(body)
    events = 0
    for m in re.finditer(rb"[^\r\n]+", body):
        text = as_text(m.group())
        if text.strip():
            events += text.lstrip()[:1] in ("{", "[")
            out[m.start():m.end()] = same_size(values.data(text, EVENT), len(m.group()))
    if not events:
        raise CaptureError(source, 0, "not NDJSON: no line holds a JSON object or array")
    return bytes(out)


def _transports(frames: Sequence[Written], served: Served) -> Iterator[Transport]:
    return line_cases(frames, lines)


FRAMING = Framing(
    name="ndjson", media_type="application/x-ndjson", decoder=NDJSONDecoder,
    detect=looks_like_ndjson, pieces=lines, rewrite=rewrite, transports=_transports)
"""Newline-delimited JSON, as Ollama streams it."""
