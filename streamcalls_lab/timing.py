"""Recorded timing: a sidecar beside the capture, never inside it.

``turn.sse`` keeps the body byte-exact; ``turn.sse.timing.tsv`` lists each
socket read as ``t`` (seconds since the first byte) and ``bytes`` (its size).
The sizes must add up to the capture's length, so the reads reproduce the
original chunking exactly.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import CaptureError

SUFFIX = ".timing.tsv"
HEADER = "t\tbytes"
MAX_SECONDS = 86400.0
"""The latest a read may come after the first (a day): replay and serve sleep out the
gaps, so a later time (``1e300``) is no recording of a stream."""


def problem(t: float, last: float = 0.0) -> str | None:
    """Why ``t`` cannot be the time of a read that follows one at ``last``, or None: it
    must be a real clock reading (finite), never run back, and within :data:`MAX_SECONDS`."""
    if not isinstance(t, int | float) or isinstance(t, bool) or not math.isfinite(t):
        return f"time {t!r} is not a finite number of seconds"
    if t < last:
        return f"time {t:g} runs back (the read before it was at {last:g})"
    if t > MAX_SECONDS:
        return f"time {t:g} is more than {MAX_SECONDS:g} s after the first read"
    return None


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def write(path: Path, reads: Iterable[tuple[float, int]]) -> Path:
    """Write the sidecar for ``path`` from ``(t, nbytes)`` reads; returns its path."""
    out = sidecar(path)
    lines = [HEADER] + [f"{t:.6f}\t{n}" for t, n in reads]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def read(path: Path) -> list[tuple[float, int]] | None:
    """The reads recorded for ``path``, or None when it has no sidecar."""
    side = sidecar(path)
    if not os.path.lexists(side):
        return None
    reads: list[tuple[float, int]] = []
    where = str(side)
    if not side.is_file():  # a FIFO would block the read; a dangling link has no reads
        raise CaptureError(where, 0, "timing sidecar is not a regular file")
    try:
        raw = side.read_bytes()
    except OSError as e:
        raise CaptureError(where, 0, f"timing sidecar cannot be read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CaptureError(where, e.start, "timing sidecar is not UTF-8 text") from None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != HEADER:
        raise CaptureError(where, 0, f"timing sidecar must start with {HEADER!r}")
    last = 0.0
    at = len(lines[0].encode("utf-8"))
    for number, line in enumerate(lines[1:], start=2):
        try:
            t_text, n_text = line.rstrip("\r\n").split("\t")
            t, n = float(t_text), int(n_text)
        except ValueError:
            raise CaptureError(where, at, f"line {number}: expected 't<TAB>bytes'") from None
        # Replay sleeps for the gaps, so time must be a real clock reading that never runs back.
        why = problem(t, last) or ("the size is negative" if n < 0 else None)
        if why is not None:
            raise CaptureError(
                where, at,
                f"line {number}: {why} (times must be finite, non-decreasing and within "
                f"{MAX_SECONDS:g} s, sizes non-negative)",
            )
        last = t
        reads.append((t, n))
        at += len(line.encode("utf-8"))
    return reads


def chunked(
    body: bytes, reads: list[tuple[float, int]], source: str
) -> Iterator[tuple[float, bytes]]:
    """Cut ``body`` back into the recorded reads, each with its time."""
    total = sum(n for _, n in reads)
    if total != len(body):
        raise CaptureError(
            source, min(total, len(body)),
            f"timing sidecar covers {total} bytes but the capture has {len(body)}",
        )
    at = 0
    for t, n in reads:
        yield t, body[at : at + n]
        at += n
