"""Classes of reading the bytes: each read decoded alone (``decode_chunks``), lines cut
with ``str.splitlines()`` (``splitlines``), a gzip body asked for and not read
(``content_encoding``)."""

from __future__ import annotations

import codecs
import re

from ..accumulate import Accumulator
from .recognise import (
    JSON_ERROR,
    _as_text,
    _every_difference,
    _on,
)
from .registry import BugClass
from .symptom import CALLS, ERROR, SURFACE, Seen, Symptom


class DecodeChunks(Accumulator):
    """decode_chunks: each socket read is decoded with ``bytes.decode("utf-8")`` on its own.

    A read that ends inside a multi-byte character (``é`` is two bytes in UTF-8, an
    emoji four) raises ``UnicodeDecodeError`` on a well-formed stream. Only the
    byte-level entry (``feed_bytes``) has reads to get wrong. mpetazzoni/sseclient#8
    ("Decoding too soon"), vllm-project/vllm PR #38732 (bench_serve crashed on 0.4% of
    requests with CJK output), jawah/urllib3.future#349.
    """

    def read(self, chunk: bytes) -> bytes:
        # The decoded text would go to a line splitter; back to bytes for the shared one.
        return chunk.decode("utf-8").encode("utf-8")


_LINE_ENDS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What ``str.splitlines()`` ends a line at besides CR and LF (SSE ends lines at CR, LF and
CRLF only)."""


class Splitlines(Accumulator):
    """splitlines: the stream's lines are cut with ``str.splitlines()``.

    SSE lines end at CR, LF or CRLF; ``str.splitlines()`` (and ``httpx``'s ``iter_lines``)
    also ends them at U+2028, U+2029, U+0085 and friends, which JSON may carry raw inside a
    string: the data line is cut in two and the event is lost or garbled
    (open-metadata/OpenMetadata#29531; langgenius/dify PR #39008). Only the byte-level entry
    has lines to cut.
    """

    def __init__(self) -> None:
        super().__init__()
        self._text = codecs.getincrementaldecoder("utf-8")()

    def read(self, chunk: bytes) -> bytes:
        # The text as splitlines() would cut it, back to bytes for the shared SSE decoder.
        return _LINE_ENDS.sub("\n", self._text.decode(chunk)).encode("utf-8")


SEPARATORS = ("\u2028", "\u2029", "\x85")
"""Line ends to ``str.splitlines()`` that JSON may carry raw (and SSE does not end lines at)."""


def split_characters_lost(sent: str, got: str) -> bool:
    """``got`` is ``sent`` with some multi-byte characters each replaced by a run of U+FFFD
    or dropped: what decoding each read on its own with ``errors="replace"`` (or
    ``"ignore"``) makes of a character a read boundary cut."""
    if got == sent:
        return False
    j = 0
    for c in sent:
        if j < len(got) and got[j] == c:
            j += 1
        elif c.isascii():  # one byte in UTF-8: no read can cut it
            return False
        else:
            start = j
            while j < len(got) and got[j] == "\ufffd":
                j += 1
            if j == start and c in SEPARATORS:
                return False  # a line end to str.splitlines() gone: splitlines, not a read
    return j == len(got)


def _decode_chunks(s: Symptom) -> bool:
    if s.content_encoding or not s.reads_cut:
        return False  # a body served compressed fails for that reason: content_encoding
    if s.aspect == ERROR:
        return not s.hung and not s.got and "UnicodeDecodeError" in s.error
    if s.aspect == SURFACE:  # the text read through the same reads lost the same characters
        return s.message is not None and split_characters_lost(s.text, s.message)
    if s.aspect != CALLS:
        return False
    # the silent form: every difference is a call whose split characters came out as U+FFFD
    def lost(w: Seen, h: Seen) -> bool:
        a, b = _as_text(w[2], s.parsed), _as_text(h[2], s.parsed)
        return h[1] == w[1] and a is not None and b is not None and split_characters_lost(a, b)

    return _every_difference(s, lost)


def _content_encoding(s: Symptom) -> bool:
    return bool(s.content_encoding) and (s.aspect == ERROR or (s.aspect == CALLS
                                                              and bool(s.missing)))


def _cut_at_separator(s: Symptom) -> bool:
    """On a stream with a line separator in its data: what held one came out without it,
    or not at all, or the run raised."""
    if not _on("line_separator_in_data", s):
        return False
    if s.aspect == ERROR:  # half a data line parsed
        return not s.hung and JSON_ERROR.search(s.error) is not None
    if s.aspect == SURFACE:
        return s.message is not None and any(c in s.text and c not in s.message
                                             for c in SEPARATORS)
    pairs, missing, extra = s.matched
    if extra:  # a line cut in two loses what it held; it makes no call
        return False
    lost = [str(w[2]) for w, h in pairs if w != h and not any(c in str(h[2]) for c in SEPARATORS)]
    lost += [str(m[2]) for m in missing]
    return any(c in args for args in lost for c in SEPARATORS)


DECODE_CHUNKS = BugClass(
    "decode_chunks",
    "Decoded each socket read as UTF-8 on its own, so a read ending inside a multi-byte "
    "character raised, or (errors=\"replace\") silently became U+FFFD; decode with an "
    "incremental decoder (codecs.getincrementaldecoder) or split lines as bytes.",
    ("vllm-project/vllm PR #38732", "jawah/urllib3.future#349", "mpetazzoni/sseclient#8"),
    _decode_chunks,
    DecodeChunks,
    # Small socket reads: some end inside a character's UTF-8 bytes.
    {"args": '{"city": "Zürich", "note": "naïve café 👍🏽"}', "split": 20,
     "read_size": 7},
    client=True)

SPLITLINES = BugClass(
    "splitlines",
    "Cut the stream's lines with str.splitlines(), which also ends a line at U+2028, "
    "U+2029 and U+0085 (raw inside JSON strings), so a data line came apart; split on "
    "CR, LF and CRLF only, as bytes.",
    ("open-metadata/OpenMetadata#29531", "langgenius/dify PR #39008"),
    _cut_at_separator,
    Splitlines,
    # U+2028 inside a value, read in small reads.
    {"args": '{"note": "one\u2028two"}', "split": 9, "tool": "save_note",
     "provider": "openai-chat", "read_size": 9, "quirks": ("line_separator_in_data",)},
    client=True)

CONTENT_ENCODING = BugClass(
    "content_encoding",
    "Asked for gzip (Accept-Encoding) but did not read the gzip-encoded stream it got; "
    "decompress as the bytes arrive (zlib.decompressobj(wbits=31)), or do not ask for "
    "gzip.",
    ("btubbs/sseclient#36", "btubbs/sseclient#27", "phymbert/xk6-sse#21"),
    _content_encoding,
    client=True)
