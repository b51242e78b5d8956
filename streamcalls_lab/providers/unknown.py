"""Why a stream's format is unknown: which format it looks like, and why it is not read.

A stream no reader recognises still loads, as ``provider == "unknown"`` rows of kind
``other``; each row's ``problem`` says what the frame looks like and why the kit cannot read
it, so an engineer knows what they captured rather than seeing "unknown" alone. The guesses
come from each format's documented shape, never from a file name.
"""

from __future__ import annotations

from typing import Any

_COHERE_V1 = frozenset((
    "stream-start", "text-generation", "tool-calls-generation", "tool-calls-chunk",
    "citation-generation", "search-queries-generation", "search-results", "stream-end",
))
_AI_SDK_UI = frozenset((
    "start", "start-step", "text-start", "text-delta", "text-end", "tool-input-start",
    "tool-input-delta", "tool-input-available", "tool-output-available", "finish-step",
    "finish", "reasoning-start", "reasoning-delta", "reasoning-end",
))


def undetected_reason(event: str, payload: Any) -> str:
    """What a frame of a stream of unknown format looks like, and why it is not read."""
    if not isinstance(payload, dict):
        shape = type(payload).__name__ if payload is not None else "null"
        return (f"unknown format: the data is a JSON {shape}, not an object; no format this "
                "kit reads sends that")
    kind = payload.get("type")
    if payload.get("event_type") in _COHERE_V1 or "is_finished" in payload:
        return ("looks like Cohere v1 chat (event_type "
                f"{payload.get('event_type')!r}): only Cohere v2 (/v2/chat) is read; record "
                "the turn against /v2/chat")
    if kind == "completion" or event == "completion" or "completion" in payload:
        return ("looks like Anthropic Text Completions (legacy /v1/complete, a `completion` "
                "event): text only, no tool calls, not read; use the Messages API")
    if (isinstance(kind, str) and kind in _AI_SDK_UI) or "toolCallId" in payload:
        return (f"looks like a Vercel AI SDK UI message stream (type {kind!r}): a client-side "
                "re-encoding, not a provider's wire format; capture the provider's own response")
    if isinstance(payload.get("object"), str) and payload["object"].startswith("thread."):
        return (f"looks like the OpenAI Assistants API ({payload['object']}): not read; "
                "capture Chat Completions or Responses")
    if isinstance(payload.get("log"), dict) and "entries" in payload["log"]:
        return ("looks like a HAR export, not a stream: import it with "
                "`python -m streamcalls_lab import`")
    if "status" in payload and set(payload) <= {"status", "digest", "total", "completed"}:
        return ("looks like Ollama progress lines (`status`, as /api/pull sends): not a chat "
                "stream")
    if kind == "message" and isinstance(payload.get("content"), list):
        return ("looks like a whole Anthropic Messages response (type 'message'), not a "
                "stream: the request did not set \"stream\": true; record it with streaming on")
    if payload.get("object") == "response" and isinstance(payload.get("output"), list):
        return ("looks like a whole OpenAI Responses response (object 'response'), not a "
                "stream: the request did not set \"stream\": true; record it with streaming on")
    if "delta" in payload and "choices" not in payload and "type" not in payload:
        return ("a `delta` with no `type` or `choices`: a chunk of some Chat-like format "
                "that names neither, not read")
    keys = ", ".join(sorted(map(str, payload))[:8]) or "none"
    named = f"event {event!r}, " if event not in ("message", "line") else ""
    return (f"unknown format: {named}a JSON object with keys {keys}, which no format this "
            "kit reads sends")
