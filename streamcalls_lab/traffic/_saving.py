"""Save a response body as it arrives: content-decoded, read by read, with its timing sidecar.

What a capture keeps is the body the client's event parser sees: after
transfer decoding (the HTTP library's job) and content decoding (gzip,
deflate; here, never past :data:`~streamcalls_lab._inflate.MAX_INFLATED`).
Each read's decoded size and time go to ``X.timing.tsv``. A body that breaks
off, whose compressed stream is corrupt or unfinished, or that expands past the
limit, is kept as far as it decoded, with the reason in :attr:`BodyRecorder.cut`.
A body that echoes a credential the client sent, in any form a stream can carry it
(:mod:`~streamcalls_lab.echoes`: split across frames, escaped, quoted, base64), is never
kept at all. The body goes to an in-progress name (``X.partial``) and takes its own name
only at :meth:`BodyRecorder.commit`, once it and its sidecars are complete.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from .. import timing
from .._inflate import Inflater
from ..echoes import EchoSearch
from ..sources import in_progress
from .replay import Clock

DECODABLE = ("identity", "gzip", "x-gzip", "deflate")


class BodyNotSaved(RuntimeError):
    """The body cannot be kept (an encoding this cannot decode, or a credential in it)."""


class BodyRecorder:
    """Write a response body to ``out`` read by read (see the module docstring).

    The last :data:`HOLD` bytes are held back, so an echo whose pieces arrive within
    that distance of each other never reaches the disk; when an echo appears (at any
    distance), the in-progress file is removed and :meth:`feed` (or :meth:`finish`) raises
    :class:`BodyNotSaved`.
    """

    def __init__(self, out: Path, content_encoding: str | None, clock: Clock = time.monotonic,
                 secrets: Iterable[str] = ()) -> None:
        encoding = (content_encoding or "identity").strip().lower()
        if encoding not in DECODABLE:
            raise BodyNotSaved(f"the body is compressed as {encoding!r}, which this cannot "
                               "decode")
        self.encoding = encoding
        self._inflate = None if encoding == "identity" else Inflater(encoding)
        self.out = out
        self.clock = clock
        self.reads: list[tuple[float, int]] = []
        self.cut: str | None = None
        """Why the body ends early, if it does: its compressed stream corrupt or unfinished."""
        self._search = EchoSearch(secrets)
        self._hold = HOLD if self._search.needles else 0
        self._pending = b""
        self._first: float | None = None
        self.partial = in_progress(out)
        self._file = self.partial.open("wb")

    @property
    def nbytes(self) -> int:
        return sum(n for _, n in self.reads)

    def feed(self, raw: bytes, now: float) -> None:
        """One read as it came off the wire (transfer-decoded, still content-encoded)."""
        if self.cut is not None:
            return
        if self._inflate is None:
            self._keep(raw, now)
            return
        size = 0
        try:
            for data in self._inflate.feed(raw):  # one read, in bounded pieces
                self._write(data)
                size += len(data)
        except zlib.error:
            self.cut = f"corrupt {self.encoding} body"
        self._read(now, size)
        self.cut = self.cut or self._inflate.cut

    def _keep(self, data: bytes, now: float) -> None:
        self._write(data)
        self._read(now, len(data))

    def _read(self, now: float, size: int) -> None:
        if not size:
            return
        if self._first is None:
            self._first = now
        self.reads.append((now - self._first, size))

    def _write(self, data: bytes) -> None:
        self._check(self._search.feed(data))
        data = self._pending + data
        keep = len(data) - self._hold
        if keep > 0:
            self._file.write(data[:keep])
            self._file.flush()  # on disk as it comes: a writer killed mid-way leaves it
        self._pending = data[keep:] if keep > 0 else data

    def finish(self) -> Path:
        """Flush, close and write the timing sidecar; returns the sidecar's path."""
        if self._inflate is not None and self.cut is None:
            try:
                self._keep(self._inflate.flush(), self.clock())
            except zlib.error:
                self.cut = f"corrupt {self.encoding} body"
            self.cut = self.cut or self._inflate.cut
            if self.cut is None and not self._inflate.eof:
                self.cut = f"{self.encoding} body ended before its end"
        self._check(self._search.close())
        self._file.write(self._pending)
        self._pending = b""
        self._file.close()
        return timing.write(self.out, self.reads)

    def commit(self) -> Path:
        """The body under its own name, once its sidecars are written (the rename is the
        last step, so a capture under its name is a whole one)."""
        self.partial.replace(self.out)
        return self.out

    def _check(self, form: str | None) -> None:
        if form is not None:
            self.discard()
            raise BodyNotSaved(f"the body echoes a credential the client sent ({form})")

    def discard(self) -> None:
        """Close and remove the file: nothing kept."""
        self._pending = b""
        self._file.close()
        self.partial.unlink(missing_ok=True)


HOLD = 1 << 16
"""Bytes of a body held back from the disk until the reads after them show no echo."""


def _slug(url: str) -> str:
    text = re.sub(r"[^A-Za-z0-9.]+", "-", urlsplit(url).path).strip("-.")
    return text[-60:].lstrip("-.") or "root"


class Numbers:
    """1, 2, 3 ... handed out one at a time to the threads that name captures."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def __call__(self) -> int:
        with self._lock:
            self._last += 1
            return self._last


def new_capture(out: Path, url: str, suffix: str, number: Callable[[], int]) -> Path:
    """A capture name in ``out`` for a response to ``url``: the time, ``number()`` and the
    URL's path; its in-progress file (``.partial``) is created empty, so the name is never
    one that exists, whoever else (other threads, other processes) writes to ``out``. The
    capture itself appears under the name only when whole (:meth:`BodyRecorder.commit`)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    while True:
        name = out / f"{stamp}-{number():04d}-{_slug(url)}{suffix}"
        try:
            in_progress(name).open("xb").close()
        except FileExistsError:
            continue
        if name.exists():  # taken by a finished capture: leave it alone
            in_progress(name).unlink()
            continue
        return name
