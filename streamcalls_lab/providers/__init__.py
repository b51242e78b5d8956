"""Wire formats: one module per format, and the registry.

A module knows one wire format and nothing else, and declares everything about it the kit
needs in one ``FORMAT`` (:class:`~.spec.WireFormat`): its reader (a class with a ``name``, a
``sniff(event, payload)`` that recognises the format from one frame by a signature of its
own, a per-turn ``normalize(event, payload, data)`` that returns
:class:`~streamcalls_lab.events.Ev` rows, and ``hot``, the frames the fast path may read
without state), its framing, its event names, which fields hold a call's id, name and
argument text, what in its payloads is envelope rather than data, and its turn writer.

Adding a format is one new module plus one line in :data:`FORMATS`
(``tests/providers/test_formats.py`` then runs it through the same contract as the rest).
"""

from __future__ import annotations

from typing import Any as _Any

from . import (
    ag_ui,
    ai_sdk_data,
    ai_sdk_ui,
    anthropic,
    bedrock,
    cohere,
    gemini,
    gemini_interactions,
    gemini_live,
    mistral_conversations,
    ollama,
    openai_assistants,
    openai_chat,
    openai_realtime,
    openai_responses,
)
from .spec import Answer, Envelope, Fields, Reader, WireFormat

__all__ = ["FORMATS", "INTERLEAVING", "READERS", "Answer", "Envelope", "Fields", "Reader",
           "WireFormat", "sniff"]

FORMATS: dict[str, WireFormat] = {
    f.name: f
    for f in (
        anthropic.FORMAT,
        openai_chat.FORMAT,
        openai_responses.FORMAT,
        gemini.FORMAT,
        bedrock.FORMAT,
        bedrock.INVOKE,
        cohere.FORMAT,
        ollama.FORMAT,
        gemini_interactions.FORMAT,
        ai_sdk_ui.FORMAT,
        ag_ui.FORMAT,
        openai_assistants.FORMAT,
        mistral_conversations.FORMAT,
        ai_sdk_data.FORMAT,
        openai_realtime.FORMAT,
        gemini_live.FORMAT,
    )
}
"""Every wire format the kit reads, by the name the ``provider`` column shows."""
READERS: dict[str, type[Reader]] = {name: f.reader for name, f in FORMATS.items()}
"""Every format's reader, by name."""
INTERLEAVING = tuple(name for name, f in FORMATS.items() if f.interleaves)
"""The formats in which parallel calls' fragments may interleave (``WireFormat.interleaves``):
Chat keys each fragment by its ``index``, Responses by ``output_index`` / ``item_id``.
Anthropic's content blocks are sequential (each block's stop comes before the next block's
start), though its SDK keys deltas by ``index`` too."""


def sniff(event: str, payload: _Any) -> str | None:
    """The format a frame belongs to, or None when one frame cannot tell (a ping)."""
    for name, fmt in READERS.items():
        if fmt.sniff(event, payload):
            return name
    return None
