"""Undo gzip and deflate content coding, never past one limit.

Every surface that inflates a body (``proxy`` and ``record`` as it arrives, ``import``
from a recording) stops at :data:`MAX_INFLATED` bytes: a small compressed body can
expand a thousandfold (a decompression bomb). What came out up to the limit is kept
and the reason (:attr:`Inflater.cut`) goes in the capture's provenance as its
``cut_off``, so the capture loads with an error row saying so.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

MAX_INFLATED = 256 * 1024**2
"""The most bytes one compressed body may expand to."""
PIECE = 1 << 20
"""The most produced (and held) at once."""
WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}


class Inflater:
    """Inflate one body fed in pieces (``encoding``: gzip or deflate; a deflate body that
    is raw deflate, as some servers send, is taken too), stopping at ``limit`` bytes
    (default :data:`MAX_INFLATED`). A corrupt body raises :class:`zlib.error`."""

    def __init__(self, encoding: str, limit: int | None = None) -> None:
        self.encoding = encoding.strip().lower()
        self._wbits = WBITS[self.encoding]
        self.limit = MAX_INFLATED if limit is None else limit
        self.produced = 0
        self.cut: str | None = None
        """Why the output stops short: the body expands past the limit."""
        self._d = zlib.decompressobj(self._wbits)
        self._started = False

    def _bomb(self) -> str:
        return (f"the {self.encoding} body expands past {self.limit} bytes (a decompression "
                "bomb?): kept up to there")

    @property
    def eof(self) -> bool:
        """Whether the compressed stream reached its end (or the limit stopped it)."""
        return self.cut is not None or self._d.eof

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The bytes ``raw`` inflates to, in pieces of at most :data:`PIECE`."""
        more = False  # the last call filled its piece: output may still be pending
        while self.cut is None:
            if self._d.eof:
                raw = self._d.unused_data + raw
                if self._wbits != 31 or not raw:
                    return  # after a deflate stream's end: nothing a client reads
                self._d = zlib.decompressobj(31)  # gzip: the next member
            elif not raw and not more:
                return
            left = self.limit - self.produced
            want = min(left + 1, PIECE)
            try:
                out = self._d.decompress(raw, want)
            except zlib.error:
                if self._started or self._wbits != 15:
                    raise
                self._wbits = -15  # no zlib header: raw deflate
                self._d = zlib.decompressobj(-15)
                continue
            self._started = True
            raw, more = self._d.unconsumed_tail, len(out) == want
            if len(out) > left:
                out = out[:left]
                self.cut = self._bomb()
            self.produced += len(out)
            if out:
                yield out

    def flush(self) -> bytes:
        """What is left once the body has all come."""
        out = b"".join(self.feed(b""))
        if self.cut is None:
            tail, left = self._d.flush(), self.limit - self.produced
            if len(tail) > left:
                tail = tail[:left]
                self.cut = self._bomb()
            self.produced += len(tail)
            out += tail
        return out
