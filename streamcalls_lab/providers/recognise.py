"""The two ways a reader recognises its frames from one frame, each written once.

Both are positive signatures: what a frame of the format carries, never the absence of
another format's keys. Formats whose events name themselves (Anthropic, Cohere, the AI SDK
UI stream, AG-UI) are known by that name (:class:`ByType`); formats without a type field
(Gemini, Ollama) by keys of their own (:class:`ByKeys`). No frame of any format's samples or
of the real captures is claimed by two readers (``tests/providers/test_formats.py``), and no
frame of one format's written turns by another's (``tests/providers/test_recognition.py``).

What several protocols send alike is no signature: ``data: [DONE]`` (Chat Completions, the
AI SDK UI stream, Assistants) and the event names in :data:`SHARED`. A frame showing only
those is held until one that shows a format arrives (``decode.EventDecoder``).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Any

from ..events import obj, text

SHARED = frozenset(("message", "metadata", "error", "done", "end", "debug", "start", "finish"))
"""Event names more than one protocol sends, which tell no format alone: ``message`` (SSE's
default, MCP's streamable HTTP), ``metadata`` (Bedrock ConverseStream, LangGraph Platform),
``error`` (nearly all), ``done`` (Assistants), ``end``, ``debug`` (LangGraph Platform, Cohere
v2), ``start``, ``finish`` (the AI SDK's streams, and any server's own)."""


@dataclass(frozen=True, slots=True)
class ByType:
    """A ``sniff``: the frame's type is one of ``types``; the payload's ``field`` (``type``,
    or ``event_type``), or the SSE event name when a proxy dropped it from the payload (a
    name in :data:`SHARED` then tells nothing)."""

    types: Set[str]
    field: str = "type"

    def __call__(self, event: str, payload: Any) -> bool:
        if not isinstance(payload, dict):
            return False
        if self.field in payload:
            return str(payload[self.field]) in self.types
        return event in self.types and event not in SHARED

    def typed(self, event: str, payload: Any, what: str) -> tuple[dict[str, Any], str]:
        """``payload`` checked to be an object (``what`` names it in the error) and the
        type it names, checked to be a string."""
        payload = obj(payload, what)
        return payload, text(payload.get(self.field, event), self.field)


@dataclass(frozen=True, slots=True)
class ByKeys:
    """A ``sniff`` for a format without a type field: the payload is an object holding one
    of ``marks`` and every key of ``needs``, keys of the format's own, each value of the
    JSON type given (None: any)."""

    marks: Mapping[str, type | None]
    needs: Mapping[str, type | None] = field(default_factory=dict)

    def __call__(self, event: str, payload: Any) -> bool:
        return (isinstance(payload, dict)
                and any(_holds(payload, k, t) for k, t in self.marks.items())
                and all(_holds(payload, k, t) for k, t in self.needs.items()))


def _holds(payload: dict[str, Any], key: str, kind: type | None) -> bool:
    return key in payload and (kind is None or type(payload[key]) is kind)
