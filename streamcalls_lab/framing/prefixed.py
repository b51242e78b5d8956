"""Type-prefixed lines (``CODE:JSON\\n``): the AI SDK 4 data stream's framing, read and written.

https://v4.ai-sdk.dev/docs/ai-sdk-ui/stream-protocol#data-stream-protocol

Each line is a part: a type code, a colon, and the part's value as compact JSON, ended by
``\\n`` (``@ai-sdk/ui-utils``' ``formatDataStreamPart``; served under the header
``x-vercel-ai-data-stream: v1``). :class:`PrefixedDecoder` gives the
:class:`~.frame.Frame` tuples every framing gives: ``offset`` and ``end`` bound the line
(its line end included), ``event`` is the code, ``data`` the JSON text after the colon. A
blank line carries nothing and is skipped. Whether the JSON parses is checked where every
framing's data is parsed (``decode.EventDecoder``); here, what only the bytes show: a line
with no code before its colon, invalid UTF-8, a NUL byte, and a last line cut short.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .frame import BOM, Frame, LineDecoder
from .ndjson import line_cases
from .spec import Framing, Served, Transport, Values, Written, as_text, same_size

CODES = frozenset("0123456789abcdefghijk")
"""The type codes a part may carry (``0`` text ... ``k`` file; ``1``, ``4`` to ``7``
belong to older releases and are read so a stream of them is named, not misframed)."""
_SHAPE = (frozenset("".join(sorted(CODES)).encode()),
          frozenset(b":"), frozenset(b'"{[-0123456789tfn'))
"""What each of a capture's first three bytes must be: a code, a colon, a JSON value's start."""
_PREFIX = re.compile(rb"[0-9a-z]+")
_new = tuple.__new__


def looks_prefixed(head: bytes) -> bool | None:
    """Whether a capture starting with ``head`` is type-prefixed lines: its first bytes (after
    a BOM and blank lines) are a code, a colon and the start of a JSON value (``0:"``,
    ``b:{``). An SSE line starts with a field name of more than one letter (``data:``) or a
    colon, NDJSON with ``{``: neither can. None while ``head`` is too short to tell."""
    if BOM.startswith(head):
        return None  # a BOM still arriving
    rest = (head[3:] if head.startswith(BOM) else head).lstrip(b" \t\r\n")
    if not all(byte in allowed for byte, allowed in zip(rest, _SHAPE, strict=False)):
        return False
    return True if len(rest) >= len(_SHAPE) else None


class PrefixedDecoder(LineDecoder):
    """Feed bytes in any chunking; get one frame per non-blank line (``SSEDecoder``'s interface).

    ``strict=True`` raises :class:`CaptureError` at the first problem; ``strict=False`` gives
    it as a frame whose ``problem`` is set, and goes on with the next line.
    """

    _EVENT = "line"

    _WHOLE = "a whole part"

    def _whole(self, line: bytes) -> bool:
        """A last line is a part when its value (after the code's colon) is whole JSON."""
        colon = line.find(b":")
        return super()._whole(line[colon + 1:] if colon >= 0 else line)

    def _content(self, body: bytes, at: int, end: int) -> None:
        if self._binary(body, at, end, "a type-prefixed line"):
            return
        colon = body.find(b":")
        if colon <= 0 or not _PREFIX.fullmatch(body, 0, colon):
            self._problem(at, end, f"not a type-prefixed line (CODE:JSON): "
                          f"{body[:40].decode('utf-8', 'replace')!r}")
            return
        if (text := self._text(body, at, end)) is None:
            return
        self._out.append(_new(Frame, (at, end, text[:colon], text[colon + 1:], "", None,
                                      self._t, None)))


# -- writing: the inverse of the decoder ------------------------------------------------
def prefixed_line(code: str, data: str, newline: str = "\n") -> str:
    """One part as ``formatDataStreamPart`` writes it: the code, a colon, the JSON, ``\\n``."""
    if "\n" in data or "\r" in data:
        raise ValueError("a type-prefixed line cannot carry a raw line break in its JSON")
    return f"{code}:{data}{newline}"


def parts(frames: Sequence[Written], newline: str = "\n") -> list[bytes]:
    """Each frame a part: its event is the part's type code."""
    return [prefixed_line(f.event or "", f.text, newline).encode("utf-8") for f in frames]


def rewrite(body: bytes, source: str, values: Values) -> bytes:
    """Each line's value redacted like an SSE ``data`` payload; its type code kept (the
    event). A line that is no part is filler (every reader reports it)."""
    out = bytearray(body)
    dec = PrefixedDecoder(source, strict=False)
    for fr in dec.feed(body) + dec.close():
        if fr.problem is not None:
            out[fr.offset:fr.end] = same_size(values.filler(as_text(body[fr.offset:fr.end])),
                                              fr.end - fr.offset)
            continue
        start = fr.offset + len(fr.event) + 1  # after the code and its colon
        end = start + len(fr.data.encode("utf-8"))
        out[start:end] = same_size(values.data(fr.data, fr.event), end - start)
    return bytes(out)


def _transports(frames: Sequence[Written], served: Served) -> Iterator[Transport]:
    return line_cases(frames, parts)


FRAMING = Framing(
    name="prefixed", media_type="text/plain; charset=utf-8", decoder=PrefixedDecoder,
    detect=looks_prefixed, pieces=parts, rewrite=rewrite, transports=_transports, events=True)
"""Type-prefixed lines, as the AI SDK 4 data stream sends them (``text/plain``, with the
header ``x-vercel-ai-data-stream: v1``)."""
