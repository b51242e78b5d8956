"""The two ways a reader recognises its frames from one frame, each written once.

Formats whose events name themselves (Anthropic, Cohere) are known by that name; formats
without a type field (Gemini, Ollama) are known by their keys, and first make sure the
frame carries none of the keys that mark another format, so two readers never claim one
frame.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any

from ..events import obj, text


@dataclass(frozen=True, slots=True)
class ByType:
    """A ``sniff``: the frame's type is one of ``types``; the payload's ``field`` (``type``,
    or ``event_type``), or the SSE event name when a proxy dropped it from the payload."""

    types: Set[str]
    field: str = "type"

    def __call__(self, event: str, payload: Any) -> bool:
        return isinstance(payload, dict) and str(payload.get(self.field, event)) in self.types

    def typed(self, event: str, payload: Any, what: str) -> tuple[dict[str, Any], str]:
        """``payload`` checked to be an object (``what`` names it in the error) and the
        type it names, checked to be a string."""
        payload = obj(payload, what)
        return payload, text(payload.get(self.field, event), self.field)


def unclaimed(payload: Any, *marks: str) -> bool:
    """Whether ``payload`` is an object with none of ``marks``, the keys of other formats."""
    return isinstance(payload, dict) and not any(m in payload for m in marks)
