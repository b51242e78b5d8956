"""What a reading function accepts, resolved into named byte streams.

A source is a path (file, directory or glob), raw bytes, a binary file
object, or an iterable of byte chunks. Each resolves to one or more
:class:`Capture`; directories and globs give one per file, sorted by path so
a load is reproducible.
"""

from __future__ import annotations

import glob as globlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from os import PathLike
from pathlib import Path
from typing import IO

from . import timing

Source = str | PathLike | bytes | bytearray | memoryview | IO[bytes] | Iterable[bytes]
CAPTURE_SUFFIXES = (".sse", ".eventstream", ".ndjson")  # event-stream: Bedrock; NDJSON: Ollama


@dataclass
class Capture:
    name: str
    chunks: Iterable[bytes | tuple[float, bytes]]
    path: Path | None = None

    def whole(self) -> bytes | None:
        """The capture's bytes when they are one body with no recorded timing (read now),
        or None for chunks and timed reads, which only the incremental decoder takes."""
        chunks = self.chunks
        if isinstance(chunks, _FileChunks) and chunks.reads is None:
            return chunks.body()
        if isinstance(chunks, list) and len(chunks) == 1 and type(chunks[0]) is bytes:
            return chunks[0]
        return None


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _from_file(path: Path, name: str) -> Capture:
    return Capture(name, _FileChunks(path, timing.read(path)), path)


class _FileChunks:
    """A file's body, read only when iterated: a directory's captures are not all held
    in memory at once, only the one being loaded."""

    def __init__(self, path: Path, reads: list[tuple[float, int]] | None) -> None:
        self.path, self.reads = path, reads

    def body(self) -> bytes:
        with open(self.path, "rb", buffering=0) as f:  # one read, no buffer copy
            return f.read()

    def __iter__(self) -> Iterator[bytes | tuple[float, bytes]]:
        body = self.body()
        if self.reads is None:
            yield body
        else:
            yield from timing.chunked(body, self.reads, str(self.path))


def resolve(source: Source, name: str | None = None) -> list[Capture]:
    """The captures a source stands for (a directory may hold none)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return [Capture(name or "<bytes>", [bytes(source)])]
    if isinstance(source, (str, PathLike)):
        text = str(source)
        path = Path(text)
        if path.is_file() and path.suffix.lower() == ".har":
            from .importers import captures  # a HAR holds any number of streams

            return captures(path)
        if path.is_file():
            return [_from_file(path, name or path.name.removesuffix(path.suffix))]
        if path.is_dir():
            return _directory(path)
        if _is_glob(text):
            files = sorted(Path(p) for p in globlib.glob(text, recursive=True))
            return [_from_file(p, p.name.removesuffix(p.suffix)) for p in files if p.is_file()]
        raise FileNotFoundError(f"no capture at {text!r}")
    if hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "<stream>"
        return [Capture(str(label), _read_all(source))]
    if isinstance(source, Iterable):
        return [Capture(name or "<chunks>", source)]
    raise TypeError(f"not a capture source: {type(source).__name__}")


def _directory(root: Path) -> list[Capture]:
    """Every capture under ``root``, in the order ``sorted(root.rglob(...))`` gives (part by
    part), from one ``os.walk``: a sidecar is found in the listing, not by a stat per file.
    """
    found = []
    top = str(root)
    for folder, dirs, files in os.walk(top):  # like rglob, never into a symlinked folder
        rel = os.path.relpath(folder, top)
        parts = () if rel == os.curdir else tuple(rel.split(os.sep))
        listed = set(files)
        for name in chain(dirs, files):
            dot = name.rfind(".")
            if 0 < dot < len(name) - 1 and name[dot:] in CAPTURE_SUFFIXES:
                key = tuple(map(os.path.normcase, (*parts, name)))
                found.append((key, parts, name, name + timing.SUFFIX in listed))
    found.sort()
    caps = []
    for _, parts, name, timed in found:
        path = root.joinpath(*parts, name)
        reads = timing.read(path) if timed else None
        stem = "/".join((*parts, name[: name.rfind(".")]))
        caps.append(Capture(stem, _FileChunks(path, reads), path))
    return caps


def _read_all(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(1 << 16):
        if isinstance(chunk, str):
            raise TypeError("capture file objects must be opened in binary mode ('rb')")
        yield chunk
