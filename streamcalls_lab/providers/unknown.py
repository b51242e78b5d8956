"""Why a stream's format is unknown: which format it looks like, and why it is not read.

A stream no reader recognises still loads, as ``provider == "unknown"`` rows of kind
``other``; each row's ``problem`` says what the frame looks like and why the kit cannot read
it, so an engineer knows what they captured rather than seeing "unknown" alone. The guesses
come from each format's documented shape, never from a file name: a whole (non-streamed)
response is recognised by the ``whole`` reader of the format it belongs to
(``FORMAT.whole``); lookalikes of formats the kit does not read are :data:`LOOKALIKES`. A
frame that shows nothing of its own (``[DONE]``, LangGraph's ``end``) says what the rest of
its stream looks like (:func:`undetected_reasons`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..events import DONE, PAYLOAD_ERRORS
from . import FORMATS
from .recognise import SHARED

_COHERE_V1 = frozenset((
    "stream-start", "text-generation", "tool-calls-generation", "tool-calls-chunk",
    "citation-generation", "search-queries-generation", "search-results", "stream-end",
))


@dataclass(frozen=True)
class Lookalike:
    """A format the kit does not read, known by a frame's shape."""

    what: str
    """What the frame looks like (``looks like <what>``)."""
    shows: Callable[[str, Any], bool]
    """Whether a frame (its event name and payload) has that shape."""
    why: str
    """Why it is not read, and what to do instead."""
    detail: Callable[[str, Any], str] = lambda event, payload: ""
    """What of the frame to quote (after ``what``)."""
    objects: bool = True
    """Its frames are JSON objects: ``shows`` and ``detail`` see no other payload."""

    def matches(self, event: str, payload: Any) -> bool:
        return (isinstance(payload, dict) or not self.objects) and self.shows(event, payload)

    def reason(self, event: str, payload: Any) -> str:
        return f"looks like {self.what}{self.detail(event, payload)}{self.why}"


_LANGGRAPH = frozenset((  # LangGraph Platform's stream modes, as its SSE events name them
    "values", "updates", "messages/partial", "messages/complete", "messages/metadata",
    "events", "checkpoints", "tasks",
))
_SNAPSHOTS = frozenset(("messages/partial", "messages/complete"))


def _langgraph(event: str, payload: Any) -> bool:
    """A LangGraph Platform run stream's frame (https://docs.langchain.com/langsmith/streaming):
    an event named by its stream mode (``updates|<namespace>`` from a subgraph), a
    ``messages`` tuple ``[chunk, metadata]``, or the ``metadata`` event opening the run."""
    mode = event.split("|", 1)[0]
    if mode in _LANGGRAPH:
        return True
    if mode == "messages":
        return (isinstance(payload, list) and len(payload) == 2
                and all(isinstance(part, dict) for part in payload))
    return mode == "metadata" and isinstance(payload, dict) and "run_id" in payload


def _langgraph_detail(event: str, payload: Any) -> str:
    mode = event.split("|", 1)[0]
    if mode in _SNAPSHOTS:
        return (f" (event {event!r}: a snapshot of each message so far, its whole `tool_calls` "
                "each time, not a delta)")
    if mode == "messages":
        return f" (event {event!r}: a LangChain message chunk and its metadata)"
    return f" (event {event!r})"


def _jsonrpc(event: str, payload: dict[str, Any]) -> bool:
    return payload.get("jsonrpc") == "2.0" and any(k in payload for k in ("result", "method"))


def _jsonrpc_detail(event: str, payload: dict[str, Any]) -> str:
    if "method" in payload:
        return f" (JSON-RPC 2.0 {str(payload['method'])[:40]!r})"
    return f" (JSON-RPC 2.0 result of request {str(payload.get('id'))[:40]!r})"


LOOKALIKES: tuple[Lookalike, ...] = (
    Lookalike("Cohere v1 chat",
              lambda e, p: p.get("event_type") in _COHERE_V1 or "is_finished" in p,
              ": only Cohere v2 (/v2/chat) is read; record the turn against /v2/chat",
              lambda e, p: f" (event_type {p.get('event_type')!r})"),
    Lookalike("Anthropic Text Completions",
              lambda e, p: "completion" in (p.get("type"), e) or "completion" in p,
              " (legacy /v1/complete, a `completion` event): text only, no tool calls, not "
              "read; use the Messages API"),
    Lookalike("a LangGraph Platform run stream", _langgraph,
              ": an agent server's stream, a layer above the model, not read; its calls are "
              "the model's: record the model API's own stream (between the agent and the "
              "provider) to read them fragment by fragment",
              _langgraph_detail, objects=False),
    Lookalike("an MCP streamable-HTTP response", _jsonrpc,
              ": not read; a tool call is the client's request (`tools/call`, its name and "
              "arguments whole in the request body), which this stream answers, not a "
              "streamed call",
              _jsonrpc_detail),
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


def looks_like(event: str, payload: Any) -> Lookalike | None:
    """The first of :data:`LOOKALIKES` that a frame shows, or None."""
    for lookalike in LOOKALIKES:
        if lookalike.matches(event, payload):
            return lookalike
    return None


def undetected_reason(event: str, payload: Any, data: str | None = None) -> str:
    """What a frame of a stream of unknown format looks like, and why it is not read.

    ``data`` is the frame's raw text (a whole response's arguments are read from it); without
    it the payload is written out again, which says the same.
    """
    if payload is DONE:
        return ("unknown format: `[DONE]` ends the streams of several formats (Chat "
                "Completions, the AI SDK UI stream, Assistants) and names none; no frame of "
                "the stream showed one")
    lookalike = looks_like(event, payload)
    if lookalike is not None:
        return lookalike.reason(event, payload)
    named = f"event {event!r}, " if event not in ("message", "line") else ""
    shared = (f" (the name {event!r} is sent by several protocols and names none)"
              if event in SHARED - {"message"} else "")
    if not isinstance(payload, dict):
        shape = type(payload).__name__ if payload is not None else "null"
        return (f"unknown format: {named}the data is a JSON {shape}, not an object; no format "
                f"this kit reads sends that{shared}")
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
    return (f"unknown format: {named}a JSON object with keys {keys}, which no format this "
            f"kit reads sends{shared}")


def undetected_reasons(frames: Sequence[tuple[str, Any, str]]) -> list[str]:
    """:func:`undetected_reason` of each frame (event, payload, data) of one stream; a frame
    that shows no lookalike of its own (``[DONE]``, an ``end`` with null data) in a stream
    whose other frames show one says that the stream looks so, and which frame shows it."""
    reasons = [undetected_reason(*frame) for frame in frames]
    shown = next(((event, found) for event, payload, _ in frames
                  if (found := looks_like(event, payload)) is not None), None)
    if shown is None:
        return reasons
    by, lookalike = shown
    for i, (event, _, _) in enumerate(frames):
        if reasons[i].startswith("unknown format:"):
            reasons[i] = (f"looks like {lookalike.what} (as its {by!r} events show; this frame: "
                          f"event {event!r}){lookalike.why}")
    return reasons
