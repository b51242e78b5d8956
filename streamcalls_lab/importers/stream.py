"""What every importer yields, and how it lands on disk as a loadable capture."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import echoes, provenance, timing
from ..framing import AutoDecoder
from ..sources import in_progress


@dataclass
class Stream:
    """One event-stream body found in a recording file."""

    name: str
    """File stem for the capture (``<recording>__i<n>`` and the like)."""
    body: bytes
    reads: list[tuple[float, int]] | None = None
    """``(t, nbytes)`` per read when the recording kept timing; sizes add up to ``body``."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Provenance: origin file and entry, URL, status, headers (already scrubbed)."""
    secrets: list[str] = field(default_factory=list, repr=False)
    """Credential values seen in the recording: checked absent from what is written."""

    def echo(self) -> str | None:
        """How the body still echoes a request credential, or None (see
        :func:`~streamcalls_lab.echoes.find`)."""
        return echoes.find(self.body, self.secrets)

    def scrubbed(self) -> Stream:
        """This stream with every echo of a request credential in its body replaced by as
        many ``x`` (a gateway's error can quote the key back); lengths, so timing, kept."""
        body, n = provenance.scrub_body(self.body, self.secrets)
        if not n:
            return self
        meta = {**self.meta, "scrubbed": f"{n} echo(es) of a request credential replaced "
                                         "by as many 'x' (lengths kept)"}
        return replace(self, body=body, meta=meta)


def exchanges(
    items: Iterable[Any],
) -> Iterator[tuple[int, Any, dict[str, Any], dict[str, Any]]]:
    """Each recorded exchange (a HAR entry, a VCR interaction) numbered, with its request
    and its response (``{}`` where the recording has none)."""
    for i, item in enumerate(items):
        yield i, item, item.get("request") or {}, item.get("response") or {}


def frame_reads(body: bytes, times: list[float]) -> list[tuple[float, int]] | None:
    """Reads at frame granularity: frame ``i`` of ``body`` arrived at ``times[i]``.

    For recordings that timed each event rather than each socket read. None
    when the counts disagree, because then no frame can be trusted to its time.
    """
    dec = AutoDecoder(strict=False)  # SSE or AWS event-stream
    ends = [f.end for f in dec.feed(body) + dec.close() if f.problem is None]
    if not ends or len(ends) != len(times):
        return None
    t0 = times[0]
    reads, at = [], 0
    for end, t in zip(ends, times, strict=True):
        reads.append((max(0.0, t - t0), end - at))
        at = end
    if at < len(body):  # trailing bytes after the last event arrive with it
        t, n = reads[-1]
        reads[-1] = (t, n + len(body) - at)
    # Clocks of different events can disagree by rounding; replay needs them non-decreasing.
    for i in range(1, len(reads)):
        if reads[i][0] < reads[i - 1][0]:
            reads[i] = (reads[i - 1][0], reads[i][1])
    return reads


def write(stream: Stream, out_dir: Path) -> Path:
    """Write ``<name>.sse`` (bytes as found), its timing sidecar if any, and its provenance."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{stream.name}.sse"
    stream = stream.scrubbed()  # again, for a Stream that did not come through streams()
    left = stream.echo()
    if left is not None:
        raise ValueError(f"refusing to write {stream.name}: it echoes a credential ({left})")
    part = in_progress(path)
    part.write_bytes(stream.body)
    if stream.reads is not None:
        timing.write(path, stream.reads)
    else:
        timing.sidecar(path).unlink(missing_ok=True)  # a stale one would no longer add up
    provenance.write(path, stream.meta, stream.secrets)
    part.replace(path)  # last: a capture under its own name is a whole one
    return path
