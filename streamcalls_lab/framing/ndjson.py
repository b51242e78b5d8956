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

from .frame import Frame, LineDecoder

EVENT = "line"
"""The ``event`` of every NDJSON frame."""
_BOM = b"\xef\xbb\xbf"
_new = tuple.__new__


def looks_like_ndjson(head: bytes) -> bool | None:
    """Whether a capture starting with ``head`` is JSON text rather than SSE: its first byte
    that is not whitespace (after a BOM) opens a JSON object or array. None while ``head``
    is all whitespace, which cannot tell yet."""
    rest = head[3:] if head.startswith(_BOM) else head
    if _BOM.startswith(head):
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
    def _line(self, line: bytes, at: int, end: int) -> None:
        if self._stopped:
            return
        body = line[:-1] if line.endswith(b"\r") else line
        if at == 0 and body.startswith(_BOM):
            body = body[3:]  # as SSE: a leading byte-order mark is not content
            at = 3
        if not body.strip(b" \t"):
            return  # a blank line carries nothing
        if self._first:
            self._first = False
            why = _not_a_stream(body.strip(b" \t"))
            if why is not None:
                self._stopped = True
                self._problem(at, end, why + ": nothing after it is read")
                return
        if b"\0" in body:
            self._problem(at + body.index(b"\0"), end,
                          "binary data (a NUL byte), not newline-delimited JSON")
            return
        try:
            data = body.decode("utf-8")
        except UnicodeDecodeError as e:
            where = at + e.start
            self._problem(where, end, f"invalid UTF-8 in a line (byte 0x{body[e.start]:02x} "
                          f"at {where})")
            return
        self._out.append(_new(Frame, (at, end, EVENT, data, "", None, self._t, None)))
