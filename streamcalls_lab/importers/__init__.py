"""Turn other recording formats into loadable ``.sse`` captures.

Each module reads one format and yields :class:`Stream` objects; :func:`write`
puts one on disk as ``<name>.sse`` with its timing sidecar (when the format
kept timing) and a provenance sidecar from which every credential header has
been dropped. Adding a format is one module plus one line in ``READERS``.

- ``har``: HAR archives (DevTools, mitmproxy): body bytes as received.
- ``vcr``: VCR cassettes (vcrpy YAML or JSON): body bytes as recorded.
- ``jsonl``: JSON-lines chunk logs (the AI SDK): framing rebuilt, not as sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from os import PathLike
from pathlib import Path

from ..sources import Capture
from . import har, jsonl, vcr
from .stream import Stream, write

READERS: dict[str, Callable[[Path], Iterator[Stream]]] = {
    ".har": har.streams,
    ".yaml": vcr.streams,
    ".yml": vcr.streams,
    ".json": vcr.streams,
    ".jsonl": jsonl.streams,
}

__all__ = ["READERS", "Stream", "captures", "import_file", "import_paths", "streams", "write"]


def streams(path: str | PathLike[str]) -> Iterator[Stream]:
    """The event streams a recording file holds, chosen by its suffix."""
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        known = ", ".join(sorted(READERS))
        raise ValueError(f"{path}: unknown recording format (known suffixes: {known})")
    yield from reader(path)


def import_file(path: str | PathLike[str], out_dir: str | PathLike[str]) -> list[Path]:
    """Write every stream of one recording file into ``out_dir``; returns the capture paths."""
    return [write(s, Path(out_dir)) for s in streams(path)]


def import_paths(
    paths: Iterable[str | PathLike[str]],
    out_dir: str | PathLike[str],
    *,
    progress: bool | None = None,
) -> list[Path]:
    """:func:`import_file` over many files, with a progress bar (``None``: only on a terminal)."""
    from tqdm.auto import tqdm

    files = list(paths)
    written: list[Path] = []
    for path in tqdm(files, desc="import", unit="file", disable=_disable(progress)):
        written += import_file(path, out_dir)
    return written


def captures(path: str | PathLike[str]) -> list[Capture]:
    """In-memory captures of a recording file, for ``load()`` to read without writing files."""
    from .. import timing

    out = []
    for s in streams(path):
        chunks = [s.body] if s.reads is None else list(timing.chunked(s.body, s.reads, s.name))
        out.append(Capture(s.name, chunks, Path(path)))
    return out


def _disable(progress: bool | None) -> bool | None:
    return None if progress is None else not progress
