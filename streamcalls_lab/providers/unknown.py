"""Why a stream's format is unknown: which format it looks like, and why it is not read.

A stream no reader recognises still loads, as ``provider == "unknown"`` rows of kind
``other``; each row's ``problem`` says what the frame looks like and why the kit cannot read
it, so an engineer knows what they captured rather than seeing "unknown" alone. The guesses
come from each format's documented shape, never from a file name: a whole (non-streamed)
response is recognised by the ``whole`` reader of the format it belongs to
(``FORMAT.whole``); lookalikes of formats the kit does not read are :data:`LOOKALIKES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ..events import PAYLOAD_ERRORS
from . import FORMATS

_COHERE_V1 = frozenset((
    "stream-start", "text-generation", "tool-calls-generation", "tool-calls-chunk",
    "citation-generation", "search-queries-generation", "search-results", "stream-end",
))


@dataclass(frozen=True)
class Lookalike:
    """A format the kit does not read, known by a frame's shape."""

    what: str
    """What the frame looks like (``looks like <what>``)."""
    shows: Callable[[str, dict[str, Any]], bool]
    """Whether a frame (its event name and payload) has that shape."""
    why: str
    """Why it is not read, and what to do instead."""
    detail: Callable[[str, dict[str, Any]], str] = lambda event, payload: ""
    """What of the frame to quote (after ``what``)."""

    def reason(self, event: str, payload: dict[str, Any]) -> str:
        return f"looks like {self.what}{self.detail(event, payload)}{self.why}"


LOOKALIKES: tuple[Lookalike, ...] = (
    Lookalike("Cohere v1 chat",
              lambda e, p: p.get("event_type") in _COHERE_V1 or "is_finished" in p,
              ": only Cohere v2 (/v2/chat) is read; record the turn against /v2/chat",
              lambda e, p: f" (event_type {p.get('event_type')!r})"),
    Lookalike("Anthropic Text Completions",
              lambda e, p: "completion" in (p.get("type"), e) or "completion" in p,
              " (legacy /v1/complete, a `completion` event): text only, no tool calls, not "
              "read; use the Messages API"),
    Lookalike("a HAR export", lambda e, p: isinstance(p.get("log"), dict) and "entries" in p["log"],
              ", not a stream: import it with `python -m streamcalls_lab import`"),
    Lookalike("Ollama progress lines",
              lambda e, p: "status" in p and set(p) <= {"status", "digest", "total", "completed"},
              " (`status`, as /api/pull sends): not a chat stream"),
    Lookalike("a chunk of some Chat-like format",
              lambda e, p: "delta" in p and "choices" not in p and "type" not in p,
              " (a `delta` with no `type` or `choices`): it names neither, not read"),
)
"""Streams of formats the kit does not read, in the order they are tried."""


def whole_response(payload: Any, data: str) -> tuple[str, int] | None:
    """The format whose whole (non-streamed) response ``payload`` is, and how many calls it
    holds, asking every format's ``whole`` reader; None when it is none's."""
    for name, fmt in FORMATS.items():
        if fmt.whole is None:
            continue
        try:
            answer = fmt.whole(payload, data)
        except PAYLOAD_ERRORS:  # its shape, but a field of the wrong type: still not one
            continue
        if answer is not None:
            return name, len(answer.calls)
    return None


def undetected_reason(event: str, payload: Any, data: str | None = None) -> str:
    """What a frame of a stream of unknown format looks like, and why it is not read.

    ``data`` is the frame's raw text (a whole response's arguments are read from it); without
    it the payload is written out again, which says the same.
    """
    if not isinstance(payload, dict):
        shape = type(payload).__name__ if payload is not None else "null"
        return (f"unknown format: the data is a JSON {shape}, not an object; no format this "
                "kit reads sends that")
    for lookalike in LOOKALIKES:
        if lookalike.shows(event, payload):
            return lookalike.reason(event, payload)
    if data is None:
        try:
            data = orjson.dumps(payload).decode()
        except TypeError:  # (an integer past 64 bits: orjson read it, but cannot write it)
            data = ""
    found = whole_response(payload, data)
    if found is not None:
        name, calls = found
        return (f"looks like a whole {name} response ({calls} call{'s' * (calls != 1)}), not "
                "a stream: the request did not ask for streaming (\"stream\": true, or the "
                "API's streaming endpoint); record it with streaming on")
    keys = ", ".join(sorted(map(str, payload))[:8]) or "none"
    named = f"event {event!r}, " if event not in ("message", "line") else ""
    return (f"unknown format: {named}a JSON object with keys {keys}, which no format this "
            "kit reads sends")
