"""What a reading function accepts, resolved into named byte streams.

A source is a path (file, directory or glob), raw bytes, a binary file
object, or an iterable of byte chunks. Each resolves to one or more
:class:`Capture`; directories and globs give one per file, sorted by path so
a load is reproducible.

Folders are careless places: an entry that cannot be a capture (a dangling
or looping symlink, a folder or FIFO named ``x.sse``, an unreadable file or
folder, a broken timing sidecar) becomes a :class:`Capture` whose
``problem`` says why, so ``load(strict=False)`` gives it an error row and
keeps the rest, and strict mode raises a :class:`CaptureError` naming it.
Only regular files are ever opened. A glob's turns are named by their path
relative to the glob's literal folder, as a directory's are, and a file
reached twice (a ``**`` through a symlink loop) is loaded once. A path or
glob that matches nothing is an error, never an empty table.
"""

from __future__ import annotations

import errno
import glob as globlib
import hashlib
import json
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from os import PathLike
from pathlib import Path
from typing import IO, TypeVar

from . import provenance, timing
from .errors import CaptureError

Source = str | PathLike | bytes | bytearray | memoryview | IO[bytes] | Iterable[bytes]
CAPTURE_SUFFIXES = (".sse", ".eventstream", ".ndjson", ".datastream")
"""What a capture file is named: SSE, AWS event-stream (Bedrock), NDJSON (Ollama) and the AI
SDK 4 data stream's type-prefixed lines (served as ``text/plain``, so no type names it)."""

_RECORDING_SUFFIXES = (".har", ".mitm", ".flow", ".json", ".jsonl")
"""Suffixes a recording ``load()`` may read directly has (``importers.is_recording`` decides)."""


@dataclass
class Capture:
    name: str
    chunks: Iterable[bytes | tuple[float, bytes]]
    path: Path | None = None
    problem: CaptureError | None = None
    """Why this entry cannot be read at all (its ``chunks`` raise it too)."""
    cut_off: str | None = None
    """The reason its provenance gives for a recording that broke off (``"cut_off"``)."""
    rebuilt: str | None = None
    """What its provenance says was rebuilt rather than kept (``"rebuilt"``): an import from
    parsed chunks, whose framing, byte splits and timing are not the wire's."""

    def broke_off(self, size: int) -> CaptureError | None:
        """The error a cut-off recording of ``size`` bytes is reported with, or None."""
        if self.cut_off is None:
            return None
        return CaptureError(self.name, size,
                            f"the recording broke off here ({self.cut_off}): the stream is "
                            "incomplete")

    def whole(self) -> bytes | None:
        """The capture's bytes when they are one body with no recorded timing (read now),
        or None for chunks and timed reads (:meth:`timed` gives those with their reads)."""
        chunks = self.chunks
        if isinstance(chunks, _FileChunks) and chunks.reads is None:
            return chunks.body()
        if isinstance(chunks, list) and len(chunks) == 1 and type(chunks[0]) is bytes:
            return chunks[0]
        return None

    def timed(self) -> tuple[bytes, list[tuple[float, int]]] | None:
        """The capture's bytes and its recorded reads (each read's time and size), read now,
        when it is one file with a timing sidecar or a list of ``(time, bytes)`` reads; None
        otherwise. The reads are as recorded: whether they cover the bytes is not checked."""
        chunks = self.chunks
        if isinstance(chunks, _FileChunks):
            return None if chunks.reads is None else (chunks.body(), chunks.reads)
        if isinstance(chunks, list) and chunks and all(
                type(c) is tuple and len(c) == 2 and type(c[0]) is float and type(c[1]) is bytes
                for c in chunks):
            return b"".join(c[1] for c in chunks), [(c[0], len(c[1])) for c in chunks]
        return None


def _path_of(cap: Capture) -> Path | None:
    path = cap.__dict__["_path"]
    if type(path) is str:  # a listed file's, as its listing wrote it: a Path when asked for
        path = cap.__dict__["_path"] = Path(path)
    return path


def _set_path(cap: Capture, path: Path | str | None) -> None:
    cap.__dict__["_path"] = path


# ``Capture.path`` is a Path to whoever asks (stats, dataset, stepper, scale, served), but a
# folder's listing gives it as a string, and load() never asks: making a Path of every listed
# file (parsing its parts again) cost a tenth of listing a folder.
Capture.path = property(_path_of, _set_path)  # type: ignore[assignment]


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


class _Raises:
    """The chunks of an entry that cannot be read: iterating raises why."""

    def __init__(self, error: CaptureError) -> None:
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        raise self.error


def _bad(name: str, path: Path, reason: str) -> Capture:
    error = CaptureError(str(path), 0, reason)
    return Capture(name, _Raises(error), path, problem=error)


def entry_problem(path: Path) -> str | None:
    """Why ``path`` is not a capture file that can be opened safely, or None when it is.

    Decided by ``stat`` alone: a FIFO is never opened (that would block).
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symlink loop: it never reaches a file"
        if os.path.islink(path):
            return "a dangling symlink: its target does not exist"
        return f"cannot be read: {e.strerror or e}"
    if stat.S_ISDIR(mode):
        return "a folder, not a capture file"
    if not stat.S_ISREG(mode):
        return "not a regular file (a FIFO, socket or device): never opened"
    return None


PARTIAL = ".partial"
"""What a capture is named while it is written (``X.sse.partial``): it takes its own name only
once whole, with its sidecars; a folder's leftover one loads with a problem row."""
UNFINISHED = ("an in-progress .partial file with no completion record: its writer stopped "
              "before finishing it")


def in_progress(path: Path) -> Path:
    """The name capture ``path`` is written under until it is whole."""
    return path.with_name(path.name + PARTIAL)


def _from_file(path: Path | str, name: str, timed: bool | None = None,
               meta: bool | None = None, regular: bool = False) -> Capture:
    """A capture file, or an entry naming why it is not one (``timed``/``meta``: whether
    its sidecars exist, ``regular``: that it is a regular file and no symlink, when a folder
    listing already says; ``path`` then as the listing's string)."""
    if regular and timed is False and meta is False:
        # nothing to look at but its name: its Path is made only if asked for (Capture.path)
        return Capture(name, _FileChunks(path, None), path)  # type: ignore[arg-type]
    text, path = path, Path(path)
    why = None if regular else entry_problem(path)
    if why is not None:
        return _bad(name, path, why)
    try:
        reads = timing.read(path) if timed is not False else None
        cut, rebuilt = _said(path) if meta is not False else (None, None)
    except CaptureError as e:
        return Capture(name, _Raises(e), path, problem=e)
    return Capture(name, _FileChunks(text, reads), path, cut_off=cut, rebuilt=rebuilt)


def _said(path: Path) -> tuple[str | None, str | None]:
    """The ``cut_off`` reason (record and proxy write it) and the ``rebuilt`` note (imports
    from parsed chunks write it) in the provenance sidecar."""
    side = provenance.sidecar(path)
    if not os.path.lexists(side):
        return None, None
    if not side.is_file():  # never opened: a FIFO would block
        raise CaptureError(str(side), 0, "provenance sidecar is not a regular file")
    try:
        meta = json.loads(side.read_bytes())
    except (OSError, ValueError) as e:
        raise CaptureError(str(side), 0, f"unreadable provenance sidecar: {e}") from None
    if not isinstance(meta, dict):
        return None, None
    cut, rebuilt = meta.get("cut_off"), meta.get("rebuilt")
    return (None if cut in (None, False) else str(cut)), (str(rebuilt) if rebuilt else None)


_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class _FileChunks:
    """A file's body, read only when iterated: a directory's captures are not all held
    in memory at once, only the one being loaded."""

    def __init__(self, path: Path | str, reads: list[tuple[float, int]] | None) -> None:
        # ``path``: the listing's string where it made one (a Path is made into one again,
        # from its parts, the first time it is opened: as costly as reading a small
        # capture's frames)
        self.path, self.reads = path, reads

    @property
    def where(self) -> str:
        """The file's path as an error names it (a Path's text, as ``Capture.path``'s)."""
        return str(Path(self.path))

    def body(self) -> bytes:
        # O_NONBLOCK: had the entry become a FIFO since it was listed, opening would block.
        try:
            fd = os.open(self.path, _READ)
            try:
                info = os.fstat(fd)
                if stat.S_ISDIR(info.st_mode):  # (what opening it as a file said)
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
                if not stat.S_ISREG(info.st_mode):
                    raise CaptureError(self.where, 0, "not a regular file: never read")
                # One read of the size it has (and a byte more): no file object, whose
                # making costs a small capture as much as reading it. A read of a regular
                # file that gives fewer bytes than asked has met its end; one that gives
                # another number than the size (it grew, or a file system reads short) is
                # followed by more, up to the end.
                body = os.read(fd, info.st_size + 1)
                if len(body) != info.st_size:
                    parts = [body]
                    while parts[-1]:
                        parts.append(os.read(fd, 1 << 16))
                    body = b"".join(parts)
            finally:
                os.close(fd)
        except OSError as e:
            raise CaptureError(self.where, 0, f"cannot be read: {e.strerror or e}") from None
        return body

    def __iter__(self) -> Iterator[bytes | tuple[float, bytes]]:
        body = self.body()
        if self.reads is None:
            yield body
        else:
            yield from timing.chunked(body, self.reads, self.where)


def resolve(source: Source, name: str | None = None, *, require: bool = False) -> list[Capture]:
    """The captures a source stands for. A directory may hold none; with ``require``, one
    that holds files but no capture is a ``FileNotFoundError`` saying what it holds instead
    (nothing is skipped in silence), as a glob that matches nothing is."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return [Capture(name or "<bytes>", [bytes(source)])]
    if isinstance(source, (str, PathLike)):
        text = os.fspath(source)
        if isinstance(source, str) and _looks_like_capture(text) and not _exists(text):
            raise ValueError("this looks like capture text, not a path: pass it as bytes "
                             "(text.encode()) to read it")
        path = Path(text)
        if path.is_file() and path.suffix.lower() in _RECORDING_SUFFIXES:
            from .importers import captures, is_recording  # a recording holds many streams

            if is_recording(path):
                return captures(path)
        if path.is_dir():
            caps = _directory(path)
            if not caps and require and (why := _no_capture_in(path)):
                raise FileNotFoundError(why)
            return caps
        if os.path.lexists(path):  # a file, or an entry that names why it is not one
            return [_from_file(path, name or path.name.removesuffix(path.suffix))]
        if _is_glob(text):
            caps = _glob(text)
            if caps:
                return caps
            raise FileNotFoundError(f"no capture matches the glob {text!r}")
        raise FileNotFoundError(f"no capture at {text!r}")
    if hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "<stream>"
        return [Capture(str(label), _read_all(source))]
    if isinstance(source, Iterable) and not isinstance(source, (dict, set, frozenset)):
        if type(source) is list and all(type(c) is bytes for c in source):
            return [Capture(name or "<chunks>", source)]  # (one body: the fast path reads it)
        items = iter(source)
        first = next(items, _NOTHING)
        if isinstance(first, (str, PathLike)):  # ``sorted(folder.glob("*.sse"))``
            return _paths([first, *items], require)
        return [Capture(name or "<chunks>", _chunks(first, items))]
    raise TypeError(f"{WHAT_LOAD_TAKES}, not {type(source).__name__}")


_NOTHING = object()
WHAT_LOAD_TAKES = ("a capture source is a path (file, folder or glob), a list of paths, bytes, "
                   "a binary file object or an iterable of byte chunks")
"""The one line every wrong argument to a reading function is answered with."""


def _paths(paths: list[object], require: bool) -> list[Capture]:
    """A list of paths, each read as it would be alone (a folder's captures, a glob's), in the
    order given; turns named by path relative to the folder the paths share, as a folder's
    are, so two ``turn.sse`` in different folders keep different names."""
    bad = next((p for p in paths if not isinstance(p, (str, PathLike))), None)
    if bad is not None:
        raise TypeError(f"{WHAT_LOAD_TAKES}: a list of paths holds {type(bad).__name__} "
                        f"{str(bad)[:60]!r}")
    texts = [os.fspath(p) for p in paths]  # type: ignore[call-overload]
    parents = [os.path.dirname(os.path.abspath(t)) if not os.path.isdir(t)
               else os.path.abspath(t) for t in texts]
    root = os.path.commonpath(parents)
    caps: list[Capture] = []
    for text in texts:
        rel = os.path.relpath(os.path.abspath(text), root)
        if os.path.isdir(text) or _is_glob(text) or not os.path.lexists(text):
            found = resolve(text, require=require)
            prefix = "" if rel == os.curdir or _is_glob(text) else rel.replace(os.sep, "/") + "/"
            caps += [_renamed(c, prefix + c.name) for c in found]
        else:
            path = Path(text)
            stem = rel.removesuffix(path.suffix) if path.suffix else rel
            caps += resolve(path, stem.replace(os.sep, "/"))
    return caps


def _renamed(cap: Capture, name: str) -> Capture:
    cap.name = name
    return cap


def _chunks(first: object, rest: Iterator[object]) -> Iterator[bytes | tuple[float, bytes]]:
    """The chunks of an iterable source, each checked as it is read: anything but bytes (or
    a timed ``(t, bytes)`` read) is a one-line error naming what is taken."""
    if first is _NOTHING:
        return
    for chunk in chain((first,), rest):
        if isinstance(chunk, (bytes, bytearray, memoryview)):
            yield bytes(chunk)
        elif (isinstance(chunk, tuple) and len(chunk) == 2
              and isinstance(chunk[1], (bytes, bytearray))):
            yield chunk  # type: ignore[misc]
        else:
            raise TypeError(f"{WHAT_LOAD_TAKES}: a chunk is {type(chunk).__name__}, "
                            "not bytes")


def _exists(text: str) -> bool:
    try:
        return os.path.lexists(text)
    except (OSError, ValueError):  # too long for a path, or holds a NUL: capture text
        return False


def _looks_like_capture(text: str) -> bool:
    """Capture text, not a path: several lines, or an SSE field or JSON at the start."""
    head = text.lstrip("\ufeff \t")[:16]
    return "\n" in text or "\r" in text or head.startswith(
        ("data:", "event:", "id:", "retry:", ": ", "{")
    )


def _glob(pattern: str) -> list[Capture]:
    """The captures a glob matches, named by path relative to its literal folder; a file
    reached by two paths (a ``**`` through a symlink loop) only by the first."""
    parts = Path(pattern).parts
    literal = [p for p in parts[: next(i for i, p in enumerate(parts) if _is_glob(p))]]
    root = Path(*literal) if literal else Path()
    chosen: dict[str, Path] = {}
    for p in map(Path, globlib.glob(pattern, recursive=True)):
        if entry_problem(p) is not None:
            if p.is_dir() and p.suffix.lower() not in CAPTURE_SUFFIXES:
                continue  # a plain folder that a pattern such as ``**`` matched
            key = str(p)
        else:
            key = os.path.realpath(p)
        # One file reached by several paths: by the shortest (a loop only adds parts).
        if key not in chosen or (len(p.parts), p) < (len(chosen[key].parts), chosen[key]):
            chosen[key] = p
    caps = []
    for p in sorted(chosen.values()):
        rel = os.path.relpath(p, root)
        stem = "/".join(Path(rel).with_suffix("").parts) if p.suffix else rel
        caps.append(_from_file(p, stem))
    return caps


def _directory(root: Path) -> list[Capture]:
    """Every capture under ``root``, in the order ``sorted(root.rglob(...))`` gives (part by
    part), from one walk as ``os.walk`` makes it: a sidecar is found in the listing, not by a
    stat per file, and a regular file is known as one from the listing too (``entry_problem``
    stats only the other entries: a symlink, a FIFO, a folder named like a capture).
    """
    found = []
    top = str(root)
    unreadable: list[OSError] = []
    for folder, dirs, files, regular in _walk(top, unreadable.append):  # never into a symlink
        rel = os.path.relpath(folder, top)
        parts = () if rel == os.curdir else tuple(rel.split(os.sep))
        listed = set(files)
        prefix = os.path.join(folder, "")  # (ends with a separator: + name is the path)
        for name in chain(dirs, files):
            base = name.removesuffix(PARTIAL)
            dot = base.rfind(".")
            if 0 < dot < len(base) - 1 and base[dot:] in CAPTURE_SUFFIXES:
                key = tuple(map(os.path.normcase, (*parts, name)))
                found.append((key, parts, name, name + timing.SUFFIX in listed,
                              name + provenance.SUFFIX in listed, name in regular, prefix))
    found.sort()
    caps = []
    for _, parts, name, timed, meta, plain, prefix in found:
        base = name.removesuffix(PARTIAL)
        stem = "/".join((*parts, base[: base.rfind(".")] + name[len(base):]))
        # (its Path, when made, is the root's joined with the parts: Path parses the text)
        cap = _from_file(prefix + name, stem, timed, meta, plain)
        if name != base and cap.problem is None:  # a writer killed mid-way left it
            cap.cut_off = UNFINISHED
        caps.append(cap)
    for e in unreadable:  # a folder os.walk could not list: never silently skipped
        where = Path(e.filename or top)
        rel = os.path.relpath(where, top)
        caps.append(_bad(rel.replace(os.sep, "/"), where,
                         f"folder cannot be listed: {e.strerror or e}"))
    return caps


def _walk(top: str, onerror: Callable[[OSError], object]
          ) -> Iterator[tuple[str, list[str], list[str], set[str]]]:
    """``os.walk(top, onerror=onerror)`` (top down, never into a symlinked folder), each
    folder also giving the names of its regular files that are no symlink, as its listing
    says (``DirEntry.is_file(follow_symlinks=False)``: no stat where the file system gives
    each entry's type)."""
    dirs: list[str] = []
    files: list[str] = []
    regular: set[str] = set()
    links: set[str] = set()  # folders that are symlinks: listed, never walked into
    try:
        listing = os.scandir(top)
    except OSError as e:
        onerror(e)
        return
    with listing:
        while True:
            try:
                entry = next(listing, None)
            except OSError as e:
                onerror(e)
                return
            if entry is None:
                break
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                dirs.append(entry.name)
                if entry.is_symlink():
                    links.add(entry.name)
            else:
                files.append(entry.name)
                try:
                    if entry.is_file(follow_symlinks=False):
                        regular.add(entry.name)
                except OSError:
                    pass  # (entry_problem says why)
    yield top, dirs, files, regular
    for name in dirs:
        if name not in links:
            yield from _walk(os.path.join(top, name), onerror)


def _no_capture_in(folder: Path) -> str | None:
    """Why a folder gave no capture: what it holds, by suffix, and what is read (None for
    a folder with no file at all, which skips nothing)."""
    held: Counter[str] = Counter()
    for _, _, files in os.walk(folder):
        held.update(Path(f).suffix.lower() or "(no suffix)" for f in files)
    reads = ", ".join(CAPTURE_SUFFIXES)
    if not held:
        return None
    what = ", ".join(f"{n} {suffix}" for suffix, n in held.most_common(6))
    return (f"no capture in {str(folder)!r}: it holds {what} files, and load() reads only "
            f"{reads} in a folder (name a file or a glob such as 'dir/*.json' to read others; "
            "`python -m streamcalls_lab import` converts HAR, VCR and JSONL recordings)")


def _read_all(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(1 << 16):
        if isinstance(chunk, str):
            raise TypeError("capture file objects must be opened in binary mode ('rb')")
        yield chunk


# -- many files: one step each behind a progress bar ---------------------------------------
# Importing recordings and redacting captures both run this way: a bad file stops the run
# when the caller gave no list for failures, else it is noted there while the rest go on.
T = TypeVar("T")
R = TypeVar("R")
E = TypeVar("E", bound=Exception)


def path_tag(path: Path) -> str:
    """A short tag from a file's full path: what keeps apart the outputs of inputs that share
    a name (two folders' ``stream.yaml`` for ``import``, ``turn.sse`` for ``redact``)."""
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]


def over_files(
    step: Callable[[T], R],
    items: Iterable[T],
    *,
    desc: str,
    progress: bool | None,
    catch: type[E],
    failures: list[E] | None,
) -> list[R]:
    """``step`` of each item in order, with a progress bar (``progress`` None: only on a
    terminal). ``failures``: a list that collects each ``catch`` error while the rest go on;
    without one the first raises."""
    from tqdm.auto import tqdm  # only a batch pays for the bar's import

    done = []
    for item in tqdm(items, desc=desc, unit="file",
                     disable=None if progress is None else not progress):
        try:
            done.append(step(item))
        except catch as e:
            if failures is None:
                raise
            failures.append(e)
    return done
