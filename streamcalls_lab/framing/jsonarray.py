"""A streamed JSON array, decoded from bytes into frames: one frame per element.

Gemini's ``streamGenerateContent`` answers so when the request does not ask for SSE
(``?alt=sse``): the REST reference gives its response as "a stream of
GenerateContentResponse instances", written as one JSON array whose elements arrive as
they are generated (``[{...}\\r\\n,\\r\\n{...}\\r\\n]``). Vertex AI's REST endpoint does the same.

:class:`JSONArrayDecoder` gives the :class:`~.sse.Frame` tuples the SSE decoder gives:
``offset`` and ``end`` bound one element, ``data`` is its text exactly as sent, ``event``
is :data:`EVENT`. Only the array's structure is read here (where an element ends, what
separates elements); whether an element is valid JSON is checked where every framing's
data is parsed (``decode.EventDecoder``). Anything that breaks the structure (a byte that
is neither a separator nor whitespace, an element that is not an object or array, bytes
after the closing bracket, an array never closed) is a problem at its byte, and nothing
after it is read: without the structure there is no telling where the next element starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..errors import CaptureError
from .frame import Frame, FrameDecoder
from .ndjson import looks_like_ndjson
from .spec import Framing, Served, Transport, Values, Written, cut, same_size

EVENT = "element"
"""The ``event`` of every frame of a JSON array."""
_BOM = b"\xef\xbb\xbf"
_NOT_WS = re.compile(rb"[^ \t\r\n]")
_OUTSIDE = re.compile(rb'["{}\[\]]')  # what changes depth, outside a string
_INSIDE = re.compile(rb'["\\]')  # what ends a string, or escapes the byte after it
_new = tuple.__new__


def opens_array(head: bytes) -> bool:
    """Whether a capture that :func:`~.ndjson.looks_like_ndjson` is JSON text opens an array:
    a streamed array, not one object per line."""
    rest = head[3:] if head.startswith(_BOM) else head
    return rest.lstrip(b" \t\r\n")[:1] == b"["


def _shown(b: bytes) -> str:
    return repr(b[:1].decode("latin-1"))


class JSONArrayDecoder(FrameDecoder):
    """Feed bytes in any chunking; get one frame per array element (``SSEDecoder``'s interface).

    ``strict=True`` raises :class:`CaptureError` at the first problem; ``strict=False`` gives
    it as a frame whose ``problem`` is set, and reads nothing after it. Each byte is scanned
    once, however the bytes are chunked.
    """

    _EVENT = EVENT

    def __init__(self, source: str = "<bytes>", *, strict: bool = True) -> None:
        super().__init__(source, strict=strict)
        self._buf = bytearray()  # grows in place: a long element costs no copy per read
        self._base = 0  # absolute offset of _buf[0]
        self._i = 0  # _buf[:_i] is consumed
        self._state = "open"  # open, first, element, after, next, closed, stopped
        self._scan = 0  # inside an element: where in _buf its scan resumes
        self._depth = 0
        self._in_string = False

    def _read(self, chunk: bytes) -> None:
        if self._state == "stopped":
            return
        i = self._i
        if i and 2 * i >= len(self._buf):  # let consumed bytes go, when they are most of it
            self._scan -= i
            self._base += i
            del self._buf[:i]
            self._i = 0
        self._buf += chunk
        while self._step():
            pass

    def _end(self) -> None:
        state, at = self._state, self._base + self._i
        if state not in ("closed", "stopped"):
            what = "inside an element" if state == "element" else "before the array is closed"
            self._problem(at, self._base + len(self._buf),
                          f"stream ends {what}: no closing ']' (truncated capture?)")
        self._buf.clear()
        self._base += self._i
        self._i = 0

    # -- the structure, one step at a time --------------------------------------------------
    def _step(self) -> bool:
        """Consume what the state allows at the read position; False when it needs more bytes
        (or reads no more)."""
        state = self._state
        if state == "element":
            return self._element()
        if state == "stopped":
            return False
        buf, i = self._buf, self._i
        if state == "open" and self._base + i == 0 and _BOM.startswith(buf[:3]):
            if len(buf) < 3:
                return False  # a BOM still arriving
            if buf.startswith(_BOM):
                self._i = 3
                return True
        m = _NOT_WS.search(buf, i)
        if m is None:
            self._i = len(buf)
            return False
        i = self._i = m.start()
        byte = buf[i:i + 1]
        if state == "open" and byte == b"[":
            self._state = "first"
        elif state in ("first", "after") and byte == b"]":
            self._state = "closed"
        elif state == "after" and byte == b",":
            self._state = "next"
        elif state in ("first", "next") and byte in (b"{", b"["):
            self._state, self._scan, self._depth, self._in_string = "element", i, 0, False
            return True
        else:
            self._stop(state, byte)
            return False
        self._i = i + 1
        return True

    def _element(self) -> bool:
        """Scan the element at the read position for its end (its depth back at 0)."""
        buf, at, depth, inside = self._buf, self._scan, self._depth, self._in_string
        while True:
            m = (_INSIDE if inside else _OUTSIDE).search(buf, at)
            if m is None:
                self._scan, self._depth, self._in_string = len(buf), depth, inside
                return False
            c, at = buf[m.start()], m.end()
            if inside:
                if c == 0x5C:  # a backslash escapes the byte after it, whatever it is
                    if at >= len(buf):  # ... which has not arrived yet
                        self._scan, self._depth, self._in_string = m.start(), depth, inside
                        return False
                    at += 1
                else:
                    inside = False
            elif c == 0x22:
                inside = True
            elif c in (0x7B, 0x5B):
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    break
        i = self._i
        element, start, end = bytes(buf[i:at]), self._base + i, self._base + at
        try:
            data = element.decode("utf-8")
        except UnicodeDecodeError as e:
            self._problem(start + e.start, end, f"invalid UTF-8 in an element (byte "
                          f"0x{element[e.start]:02x} at {start + e.start})")
        else:
            self._out.append(_new(Frame, (start, end, EVENT, data, "", None, self._t, None)))
        self._i = at
        self._state = "after"
        return True

    def _stop(self, state: str, byte: bytes) -> None:
        at = self._base + self._i
        expected = {
            "open": "'[' opening the array",
            "first": "an object or array, or ']'",
            "next": "an object or array after ','",
            "after": "',' or ']' after an element",
            "closed": "nothing but whitespace after the closing ']'",
        }[state]
        self._state = "stopped"
        self._buf.clear()
        self._problem(at, at + 1, f"not a streamed JSON array: expected {expected}, found "
                      f"{_shown(byte)}; nothing after it is read")


# -- recognising, writing, re-framing, serving ---------------------------------------------
def looks_like_array(head: bytes) -> bool | None:
    """Whether a capture starting with ``head`` is a JSON array: its first byte that is not
    whitespace (after a BOM) is ``[``; None while ``head`` is all whitespace."""
    text = looks_like_ndjson(head)
    return None if text is None else text and opens_array(head)


SEPARATOR = ",\r\n"
"""Between elements, as Gemini writes them."""


def elements(frames: Sequence[Written], separator: str = SEPARATOR, open_: str = "[",
             close: str = "]") -> list[bytes]:
    """The array: each frame an element, one write each (the brackets ride with the first and
    the last; a separator goes before every element but the first)."""
    out = [(("" if n else open_) + ("" if n == 0 else separator) + f.text).encode("utf-8")
           for n, f in enumerate(frames)]
    if not out:
        return [(open_ + close).encode("utf-8")]
    out[-1] += close.encode("utf-8")
    return out


def rewrite(body: bytes, source: str, values: Values) -> bytes:
    """Each element redacted like an SSE ``data`` payload; brackets, commas and the
    whitespace between elements kept. An array that cannot be read to its end is
    refused whole: past its problem no element can be told from the next."""
    out = bytearray(body)
    dec = JSONArrayDecoder(source, strict=False)
    for fr in dec.feed(body) + dec.close():
        if fr.problem is not None:
            raise CaptureError(source, fr.offset, f"not a whole JSON array: {fr.problem}")
        out[fr.offset:fr.end] = same_size(values.data(fr.data, fr.event), fr.end - fr.offset)
    return bytes(out)


def _transports(frames: Sequence[Written], served: Served) -> Iterator[Transport]:
    body = b"".join(elements(frames))
    commas = [k for k in range(len(body)) if body[k:k + 1] == b"," and body[k + 1:k + 2] == b"\r"]
    yield Transport("element_boundaries", "every read cut just before and just after each "
                    "separating comma", cut(body, [p for k in commas for p in (k, k + 1)]))
    yield Transport("array_whitespace", "whitespace around the brackets and separators "
                    "('[\\n', '\\n  ,\\t', '\\n]\\n'), a JSON array all the same",
                    tuple(elements(frames, "\n  ,\t", "[\n", "\n]\n")))


FRAMING = Framing(
    name="jsonarray", media_type="application/json", decoder=JSONArrayDecoder,
    detect=looks_like_array, pieces=elements, rewrite=rewrite, transports=_transports)
"""A streamed JSON array, as Gemini answers without ``?alt=sse``."""
