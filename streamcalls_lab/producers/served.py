"""Who served a turn: the host and model, wherever a capture says.

A ``provider`` is a wire format, and one format pools many servers (OpenAI Chat's is spoken by
OpenAI, Azure, Groq, Together, DeepSeek, vLLM, llama.cpp, LM Studio ...), so quirks are counted
per host and model. Three places say who served a capture: the stream itself (the first
``model`` or ``modelVersion`` a payload names: the model that answered), its provenance sidecar
(``X.sse.meta.json``, written by ``record``, the proxy and the importers: the URL's host, and
the model the request asked for, used where the stream names none), and a folder's
``INDEX.tsv`` (the shared captures' notes, ``host=... | model=...``), for what neither says.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import pandas as pd

from .. import _columns as columns
from .. import _deepjson as deepjson
from .. import provenance
from ..errors import CaptureError
from ..events import is_done
from ..framing import decode_any
from ..sources import Capture, Source, resolve

SERVED_COLUMNS = ("turn", "host", "model", "said_by")
_MODEL_KEYS = ("model", "modelVersion")
_NOTE = re.compile(r"(?:^|\|)\s*(host|model)=([^|]+)")
_FIRST_FRAMES = 8  # a model is named in a stream's first frames or not at all


def _named_model(value: Any, depth: int = 0) -> str | None:
    """The first model a payload names, at most two objects deep (``message.model``)."""
    if not isinstance(value, dict) or depth > 2:
        return None
    for key in _MODEL_KEYS:
        if isinstance(value.get(key), str) and value[key]:
            return value[key]
    for inner in value.values():
        found = _named_model(inner, depth + 1)
        if found:
            return found
    return None


def _stream_model(cap: Capture) -> str | None:
    try:
        return _first_model(cap)
    except CaptureError:  # a sidecar that does not fit its capture: load() reports it
        return None


def _first_model(cap: Capture) -> str | None:
    seen = 0
    for frame in decode_any(cap.chunks, cap.name, strict=False):
        if frame.problem is not None or is_done(frame.data):
            continue
        try:
            found = _named_model(deepjson.parse(frame.data))
        except orjson.JSONDecodeError:
            found = None
        if found:
            return found
        seen += 1
        if seen >= _FIRST_FRAMES:
            return None
    return None


def _index_notes(folder: Path) -> dict[str, dict[str, str]]:
    """``INDEX.tsv`` of a folder of captures: for each file (relative path), its host and
    model as the notes column says them."""
    index = folder / "INDEX.tsv"
    if not index.is_file():
        return {}
    out = {}
    with index.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            said = {k: v.strip() for k, v in _NOTE.findall(row.get("notes") or "")}
            if said and row.get("file"):
                out[row["file"]] = said
    return out


def _folders(cap: Capture) -> Iterator[tuple[Path, str]]:
    """Each folder above a capture's file, with the file's path relative to it."""
    if cap.path is None:
        return
    path = Path(cap.path)
    for parent in path.parents:
        yield parent, path.relative_to(parent).as_posix()


def served_by(source: Source) -> pd.DataFrame:
    """One row per turn of ``source``: ``host`` and ``model`` (NA where nothing says), and
    ``said_by``, which of ``stream``, ``provenance`` or ``index`` said them."""
    return served_rows(resolve(source, require=True))


def served_rows(caps: Sequence[Capture]) -> pd.DataFrame:
    """:func:`served_by` of captures already resolved (one row each, in order).

    The model a stream names wins over the one its provenance records: the provenance's is
    what the request asked for, and a server may answer with another (an alias resolved, a
    fallback, a gateway's routing)."""
    rows = []
    indexes: dict[Path, dict[str, dict[str, str]]] = {}
    for cap in caps:
        host = model = None
        said: list[str] = []
        if cap.problem is None:
            model = _stream_model(cap)
            if model:
                said.append("stream")
        meta = provenance.read(Path(cap.path)) if cap.path is not None else None
        if meta:
            url = meta.get("url")
            host = urlsplit(url).hostname if isinstance(url, str) else None
            asked = meta.get("model") if isinstance(meta.get("model"), str) else None
            if host or (asked and model is None):
                said.append("provenance")
            model = model or asked
        if host is None or model is None:
            for folder, relative in _folders(cap):
                if folder not in indexes:
                    indexes[folder] = _index_notes(folder)
                notes = indexes[folder].get(relative)
                if notes:
                    host = host or notes.get("host")
                    model = model or notes.get("model")
                    said.append("index")
                    break
        rows.append((cap.name, host, model, ", ".join(said) or None))
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(SERVED_COLUMNS)
    return pd.DataFrame({name: columns.strings(values)
                         for name, values in zip(SERVED_COLUMNS, cols, strict=True)})
