"""Amazon Bedrock ConverseStream: content blocks by index, tool input as string fragments.

https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html

The stream is AWS event-stream, not SSE (:mod:`streamcalls_lab.eventstream`): the event name
is the message's ``:event-type`` header and the payload holds only that event's fields
(plus ``p``, random-length padding). A text block has no start event: its first delta is the
first sign of it. An exception message arrives as an event named by its ``:exception-type``
(``throttlingException``, ``modelStreamErrorException``: AWS names every modelled exception
``…Exception``), with ``{"message": …}`` as payload.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, Kind, fragment_row, index, obj, text
from .wire import wire_length

_TYPES = frozenset(
    (
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    )
)
_FRAGMENTS: dict[str, tuple[Kind, str]] = {  # delta member -> row kind, field of the fragment
    "toolUse": ("args_delta", "input"),  # {"toolUse": {"input": "..."}}
    "text": ("text_delta", "text"),  # {"text": "..."}
}
_EXCEPTIONS = frozenset(  # the exception members of ConverseStreamOutput
    (
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    )
)


class BedrockConverse:
    name = "bedrock-converse"
    hot = None  # the fast path reads SSE captures only, and this is AWS event-stream

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return isinstance(payload, dict) and (event in _TYPES or event in _EXCEPTIONS)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        if event == "contentBlockDelta":
            block = index(payload["contentBlockIndex"], "contentBlockIndex")
            delta = obj(payload["delta"], "delta")
            for member, (kind, key) in _FRAGMENTS.items():
                if member in delta:
                    holder = delta["toolUse"] if member == "toolUse" else delta
                    frag = text(holder[key], key)
                    return [fragment_row(event, kind, block, frag, wire_length(data, key, frag))]
            return [Ev(event, "other", block)]  # reasoning, citations, tool results
        if event == "contentBlockStart":
            block = index(payload["contentBlockIndex"], "contentBlockIndex")
            start = obj(payload["start"], "start")
            if "toolUse" in start:
                use = start["toolUse"]
                call_id, tool = text(use["toolUseId"], "toolUseId"), text(use["name"], "name")
                return [Ev(event, "call_start", block, call_id, tool)]
            return [Ev(event, "other", block)]  # a server tool's result
        if event == "contentBlockStop":
            return [Ev(event, "block_stop", index(payload["contentBlockIndex"],
                                                  "contentBlockIndex"))]
        if event == "messageStop":
            return [Ev(event, "turn_stop")]
        if event.endswith("Exception"):
            message = payload.get("message") if isinstance(payload, dict) else payload
            return [Ev(event, "error", problem=f"provider error: {event}: {message}")]
        return [Ev(event, "other")]  # messageStart, metadata
