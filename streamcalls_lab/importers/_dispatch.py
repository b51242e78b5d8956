"""Which reader a file goes to (by what it holds, never by its name alone), and the
import verbs over files and folders."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from os import PathLike
from pathlib import Path

import orjson
import yaml

from .. import _deepjson as deepjson
from ..errors import CaptureError
from ..sources import Capture, entry_problem, over_files, path_tag
from . import claude_stream, claude_trace, devtools, har, jsonl, mitm, vcr, ws_log
from .stream import Stream, write


def _first_line(path: Path) -> object:
    """The first non-blank line of a JSON-lines file, parsed (None if it is not JSON)."""
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                try:
                    return deepjson.parse(line)
                except orjson.JSONDecodeError:
                    return None
    return None


def _claude_kind(path: Path) -> Callable[[Path], Iterator[Stream]] | None:
    """The reader for a JSON-lines file that a Claude tool wrote, by its first line."""
    first = _first_line(path)
    if claude_trace.is_trace_line(first):
        return claude_trace.streams
    if claude_stream.is_stream_json_line(first):
        return claude_stream.streams
    return None


def _lines(path: Path) -> Iterator[Stream]:
    """``.jsonl``: a claude-trace log, Claude Code stream-json, else a chunk log."""
    yield from (_claude_kind(path) or jsonl.streams)(path)


def _ndjson(path: Path) -> Iterator[Stream]:
    """``.ndjson``: stream-json or a claude-trace log; an Ollama capture loads as it is."""
    reader = _claude_kind(path)
    if reader is None:
        raise CaptureError(str(path), 0, "not Claude Code stream-json nor a claude-trace log "
                                         "(an NDJSON capture such as Ollama's loads as it is)")
    yield from reader(path)


def _json(path: Path) -> Iterator[Stream]:
    """``.json``: DevTools generations, a VCR cassette, or stream-json events kept in JSON."""
    try:
        data = deepjson.parse(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise CaptureError(str(path), e.pos, f"not JSON: {e.msg}") from None
    if devtools.is_generations(data):
        yield from devtools.streams(path)
    elif isinstance(data, dict) and "interactions" in data:
        yield from vcr.streams(path)
    elif claude_stream.holds_stream_events(data):
        yield from claude_stream.streams(path)
    else:
        raise CaptureError(str(path), 0, "JSON that is no recording this reads: not a VCR "
                                         "cassette (interactions), AI SDK DevTools generations "
                                         "(runs, steps) nor stream-json/Messages events")


READERS: dict[str, Callable[[Path], Iterator[Stream]]] = {
    ".har": har.streams,
    ".yaml": vcr.streams,
    ".yml": vcr.streams,
    ".json": _json,
    ".jsonl": _lines,
    ".ndjson": _ndjson,
    ".mitm": mitm.streams,
    ".flow": mitm.streams,
    ".wslog": ws_log.streams,
}


def is_recording(path: Path) -> bool:
    """Whether ``load()`` reads this file as a recording: its name alone says which kind
    (a HAR, a mitmproxy flow file, DevTools' ``generations.json``, a claude-trace log)."""
    name = path.name.lower()
    if path.suffix.lower() in (".har", ".mitm", ".flow") or name == "generations.json":
        return True
    return path.parent.name == ".claude-trace" and name.startswith("log-") \
        and name.endswith(".jsonl")




MALFORMED = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
             OSError, EOFError, zlib.error, yaml.YAMLError)
"""What a malformed recording raises inside a reader: reported as a CaptureError naming it."""


def streams(path: str | PathLike[str]) -> Iterator[Stream]:
    """The event streams a recording file holds, chosen by its suffix, each body already
    scrubbed of the credentials its request carried (whether it is then written or loaded).

    Anything wrong with the file is a :class:`CaptureError` naming it and why, never a
    reader's traceback.
    """
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        known = ", ".join(sorted(READERS))
        raise CaptureError(str(path), 0, f"unknown recording format (known suffixes: {known})")
    why = entry_problem(path)
    if why is not None:
        raise CaptureError(str(path), 0, why)
    found = 0
    try:
        for stream in reader(path):
            found += 1
            stream = stream.scrubbed()
            left = stream.echo()
            if left is not None:
                raise CaptureError(str(path), 0, f"{stream.name}: its body echoes a request "
                                   f"credential ({left}: split across frames or encoded past "
                                   "replacing in place); nothing imported")
            yield stream
    except CaptureError:
        raise
    except MALFORMED as e:
        kind = type(e).__name__
        raise CaptureError(str(path), 0, f"malformed recording ({kind}: {e})"[:300]) from None
    if not found:
        raise CaptureError(str(path), 0, "no event-stream response in it: nothing to import")


def import_file(path: str | PathLike[str], out_dir: str | PathLike[str],
                *, tag: str | None = None, taken: set[str] | None = None) -> list[Path]:
    """Write every stream of one recording file into ``out_dir``; returns the capture paths.

    ``tag`` is added to the recording's stem in every capture name (to keep two recordings
    of the same name apart); a name already in ``taken`` (written earlier in the same run)
    gets a counter rather than overwriting it.
    """
    path = Path(path)
    stem = path.name.removesuffix(path.suffix)
    taken = set() if taken is None else taken
    out = []
    for s in list(streams(path)):  # the whole file is read before anything is written
        if tag is not None and s.name.startswith(stem):
            s.name = f"{stem}-{tag}{s.name[len(stem):]}"
        name, n = s.name, 1
        while s.name in taken:
            n += 1
            s.name = f"{name}-{n}"
        taken.add(s.name)
        out.append(write(s, Path(out_dir)))
    return out


def import_paths(
    paths: Iterable[str | PathLike[str]],
    out_dir: str | PathLike[str],
    *,
    progress: bool | None = None,
    errors: list[CaptureError] | None = None,
) -> list[Path]:
    """:func:`import_file` over many files, with a progress bar (``None``: only on a terminal).

    Recordings that share a name (two folders' ``stream.yaml``) get a tag from their full
    path, so every input gives its own captures. ``errors``: a list that collects each bad
    file while the rest go on; without one the first raises.
    """
    files = [Path(p) for p in paths]
    stems = Counter(p.name.removesuffix(p.suffix) for p in {p.resolve() for p in files})
    taken: set[str] = set()

    def one(path: Path) -> list[Path]:
        shared = stems[path.name.removesuffix(path.suffix)] > 1
        tag = path_tag(path) if shared else None
        return import_file(path, out_dir, tag=tag, taken=taken)

    written = over_files(one, files, desc="import", progress=progress, catch=CaptureError,
                         failures=errors)
    return [p for each in written for p in each]


def captures(path: str | PathLike[str]) -> list[Capture]:
    """In-memory captures of a recording file, for ``load()`` to read without writing files."""
    from .. import timing

    out = []
    for s in streams(path):
        chunks = [s.body] if s.reads is None else list(timing.chunked(s.body, s.reads, s.name))
        cut = s.meta.get("cut_off")  # as the provenance sidecar says it, once written
        rebuilt = s.meta.get("rebuilt")
        out.append(Capture(s.name, chunks, Path(path), cut_off=str(cut) if cut else None,
                           rebuilt=str(rebuilt) if rebuilt else None))
    return out

