"""A cassette: one test's recorded exchanges, every streamed body byte-exact with its reads.

A cassette is a folder (``cassettes/<module>/<test>/``) holding what the kit's recording
proxy writes: ``<time>-<n>-<path>.sse`` (or ``.ndjson``, ``.eventstream``...), its
``.timing.tsv`` read sidecar and its ``.meta.json`` provenance (method, scrubbed path, no
credential). Nothing here is a new format: ``load()``, ``serve`` and the notebooks read the
same files. A VCR.py / pytest-recording cassette (YAML or JSON) is read through the kit's VCR
importer instead, its bodies cut into one read per frame.

Reading a cassette checks every file before a test runs: a provenance that is not JSON, or
lacks its method or path, a broken timing sidecar, or a body whose framing breaks before its
end is a :class:`~streamcalls_lab.errors.CaptureError` naming the file and the byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .. import importers, provenance
from ..errors import CaptureError
from ..loader import load
from ..sources import CAPTURE_SUFFIXES, resolve
from ..traffic.replay import Read, reads

VCR_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Recording:
    """One recorded exchange: the request it answers and the reads of its streamed body."""

    method: str
    path: str
    """The request target as recorded: path and query, credential values scrubbed."""
    reads: tuple[Read, ...]
    file: str
    cut_off: str | None = None
    """Why the recording broke off (its provenance's ``cut_off``): replayed as cut."""
    status: int = 200

    @property
    def body(self) -> bytes:
        return b"".join(r.data for r in self.reads)

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({Path(self.file).name})"


def _meta(capture: Path) -> dict:
    side = provenance.sidecar(capture)
    if not side.is_file():
        raise CaptureError(str(side), 0, "missing: a cassette's body needs its provenance "
                           "(method and path) to be matched to a request")
    raw = side.read_bytes()
    try:
        meta = json.loads(raw)
    except UnicodeDecodeError as e:
        raise CaptureError(str(side), e.start, "not UTF-8 text") from None
    except json.JSONDecodeError as e:
        # the character offset as a byte offset, so the file opens at the right place
        at = len(raw.decode("utf-8", "replace")[: e.pos].encode())
        raise CaptureError(str(side), at, f"not JSON ({e.msg})") from None
    if not isinstance(meta, dict):
        raise CaptureError(str(side), 0, "not a JSON object")
    for key in ("method", "path"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise CaptureError(str(side), 0, f"no {key!r} string: the request it answers "
                               "cannot be told")
    return meta


def _checked_body(capture: Path, cut_off: str | None) -> None:
    """A body whose framing breaks is refused at the first problem's byte; a recording that
    broke off may end mid-frame (that is what it recorded)."""
    events = load(capture, strict=False)
    problems = events[events["problem"].notna()]
    if cut_off is not None:
        problems = problems[~problems["problem"].astype(str).str.contains("broke off")]
    if len(problems):
        first = problems.iloc[0]
        raise CaptureError(str(capture), int(first["offset"]), str(first["problem"]))


def read_folder(folder: Path) -> list[Recording]:
    """The recordings of a cassette folder, in the order they were recorded."""
    out = []
    for path in sorted(p for p in folder.iterdir() if p.suffix in CAPTURE_SUFFIXES):
        meta = _meta(path)
        cap = resolve(path)[0]
        if cap.problem is not None:
            raise cap.problem
        cut = meta.get("cut_off") if isinstance(meta.get("cut_off"), str) else None
        _checked_body(path, cut)
        try:
            got = reads(path)
        except CaptureError as e:
            raise CaptureError(str(path), e.offset, e.reason) from None
        status = meta.get("status")
        out.append(Recording(meta["method"].upper(), meta["path"], tuple(got), str(path), cut,
                             status if isinstance(status, int) else 200))
    return out


def read_vcr(path: Path) -> list[Recording]:
    """The event-stream interactions of a VCR.py / pytest-recording cassette, each body one
    read per frame (the cassette kept no reads: the re-cuts supply the splits)."""
    out = []
    for stream in importers.streams(path):
        url = urlsplit(str(stream.meta.get("url") or "/"))
        target = (url.path or "/") + (f"?{url.query}" if url.query else "")
        status = stream.meta.get("status")
        out.append(Recording(str(stream.meta.get("method") or "GET").upper(), target,
                             tuple(reads(stream.body, name=stream.name)), str(path),
                             stream.meta.get("cut_off"),
                             status if isinstance(status, int) else 200))
    return out


def read(where: Path) -> list[Recording]:
    """A cassette folder's recordings, or a VCR cassette file's."""
    if where.is_dir():
        return read_folder(where)
    if where.suffix.lower() in VCR_SUFFIXES:
        return read_vcr(where)
    raise CaptureError(str(where), 0, "not a cassette: neither a folder of captures nor a "
                       f"VCR cassette ({', '.join(VCR_SUFFIXES)})")
