"""Wire formats: each module turns one provider's frames into normalised events.

A provider module knows one wire format and nothing else. It exposes a class
with a ``name``, a ``sniff(event, payload)`` that recognises the format from
one frame, and a per-turn ``normalize(event, payload, data)`` that returns
:class:`Ev` rows. Adding a format is one new module plus one line in
``FORMATS``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

KINDS = (
    "text_start",
    "text_delta",
    "call_start",
    "args_delta",
    "args_done",
    "block_stop",
    "turn_stop",
    "other",
    "error",
)


class Ev(NamedTuple):
    """One normalised event; a frame yields one or more, in wire order."""

    event: str
    kind: str
    block: int | None = None
    call_id: str | None = None
    tool: str | None = None
    fragment: str | None = None
    wire_chars: int | None = None
    final: str | None = None
    problem: str | None = None


class Format(Protocol):
    name: str

    @staticmethod
    def sniff(event: str, payload: Any) -> bool: ...

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]: ...


def text(value: Any, field: str) -> str:
    """A field that must be a string; anything else is reported, never coerced."""
    if type(value) is str:
        return value
    raise TypeError(f"{field} should be a string, not {type(value).__name__}")


def maybe_text(value: Any, field: str) -> str | None:
    return None if value is None else text(value, field)


def index(value: Any, field: str) -> int:
    """A block index: an integer (``True`` and ``"0"`` are not)."""
    if type(value) is int:
        return value
    raise TypeError(f"{field} should be an integer, not {type(value).__name__}")


DONE = object()
"""Stands for a ``data: [DONE]`` payload, which is not JSON."""


from .anthropic import AnthropicMessages  # noqa: E402
from .openai_chat import OpenAIChat  # noqa: E402
from .openai_responses import OpenAIResponses  # noqa: E402

FORMATS: dict[str, type] = {
    f.name: f for f in (AnthropicMessages, OpenAIChat, OpenAIResponses)
}


def sniff(event: str, payload: Any) -> str | None:
    """The format a frame belongs to, or None when one frame cannot tell (a ping)."""
    for name, fmt in FORMATS.items():
        if fmt.sniff(event, payload):
            return name
    return None
