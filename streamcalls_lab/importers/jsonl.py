"""JSON-lines chunk logs (the AI SDK's ``*.chunks.txt``): one event per line, rebuilt as SSE.

The original framing is NOT preserved and cannot be: the recorder parsed
each event and wrote it again as one line, so ``event:`` lines, blank-line
layout, whitespace inside the JSON, the ``[DONE]`` sentinel and socket-read
boundaries are gone. What survives is the order of events and every string
inside them, so fragment texts (``chars``) are exact. ``wire_chars`` measures
the re-serialised JSON's escaping, which can differ from the provider's
(one writes ``é`` where another wrote ``\\u00e9``).

Rebuilt frame: ``event: <type>`` when the event object has a string
``type`` (Anthropic, Responses and most others name events that way on the
wire; Chat Completions chunks have none), then ``data: <the line as is>``.
No ``[DONE]`` is invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from .. import _deepjson as deepjson
from ..errors import CaptureError
from ..framing.sse import sse_body, sse_frame
from .stream import Stream

NOTE = "framing rebuilt from JSON lines: event lines, whitespace, [DONE] and reads not as sent"


def frame(line: bytes, payload: object) -> bytes:
    """One SSE frame for one event line (UTF-8, as JSON is); a ``type`` holding a line
    break, which an ``event:`` line cannot carry, is a :class:`ValueError`."""
    event = payload.get("type") if isinstance(payload, dict) else None
    return sse_body([sse_frame(line.decode("utf-8"), event if isinstance(event, str) else None)])


def rebuild(raw: bytes, source: str = "<jsonl>") -> bytes:
    """The SSE body for a JSON-lines log; a line that is not JSON is a :class:`CaptureError`."""
    out: list[bytes] = []
    at = 0
    for line in raw.splitlines(keepends=True):
        text = line.rstrip(b"\r\n")
        if text.strip():
            try:
                payload = deepjson.parse(text)
            except orjson.JSONDecodeError as e:
                raise CaptureError(source, at, f"line is not JSON: {e}") from None
            try:
                out.append(frame(text, payload))
            except ValueError as e:
                raise CaptureError(source, at, f"event type cannot be an SSE event: {e}") from None
        at += len(line)
    if not out:
        raise CaptureError(source, 0, "no events: the file has no JSON lines")
    return b"".join(out)


def streams(path: Path) -> Iterator[Stream]:
    """The one stream a chunk log holds."""
    body = rebuild(path.read_bytes(), str(path))
    meta = {"source": "jsonl", "origin": path.name, "note": NOTE, "rebuilt": NOTE}
    yield Stream(path.name.removesuffix(path.suffix), body, None, meta)
