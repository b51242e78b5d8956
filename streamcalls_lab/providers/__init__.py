"""Wire formats: the registry of readers, one module per format.

A reader knows one wire format and nothing else. It is a class with a ``name``, a
``sniff(event, payload)`` that recognises the format from one frame, a per-turn
``normalize(event, payload, data)`` that returns :class:`~streamcalls_lab.events.Ev` rows
(the reference: every frame can go through it), and ``hot``: a
:class:`~streamcalls_lab.events.Hot` describing the frames that need no state, or None.
The fast path (``bulk.py``) reads only ``hot``; ``hot.rows`` and ``normalize`` build a
frame's rows with the same helper, so they cannot say different things about it.

Adding a format is one new module plus one line in ``READERS`` (see docs/contract.md).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..events import Ev, Hot
from .anthropic import AnthropicMessages
from .bedrock import BedrockConverse, BedrockInvoke
from .cohere import CohereChat
from .gemini import Gemini
from .gemini_interactions import GeminiInteractions
from .ollama import Ollama
from .openai_chat import OpenAIChat
from .openai_responses import OpenAIResponses

__all__ = ["READERS", "Reader", "sniff"]


class Reader(Protocol):
    name: str
    hot: Hot | None

    @staticmethod
    def sniff(event: str, payload: Any) -> bool: ...

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]: ...


READERS: dict[str, type[Reader]] = {
    f.name: f
    for f in (AnthropicMessages, OpenAIChat, OpenAIResponses, Gemini, BedrockConverse,
              BedrockInvoke, CohereChat, Ollama, GeminiInteractions)
}
"""Every wire format's reader, by the name the ``provider`` column shows."""


def sniff(event: str, payload: Any) -> str | None:
    """The format a frame belongs to, or None when one frame cannot tell (a ping)."""
    for name, fmt in READERS.items():
        if fmt.sniff(event, payload):
            return name
    return None
