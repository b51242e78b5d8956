"""Anthropic Messages: content blocks announced, filled by deltas, closed by a stop.

https://docs.anthropic.com/en/api/messages-streaming
"""

from __future__ import annotations

from typing import Any

from . import Ev, index, text
from .wire import wire_length

_TYPES = frozenset(
    (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    )
)
_CALL_BLOCKS = frozenset(("tool_use", "server_tool_use", "mcp_tool_use"))
_new = tuple.__new__  # an Ev without NamedTuple's keyword handling, for the per-delta rows


class AnthropicMessages:
    name = "anthropic-messages"

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        # The payload's type, or the event line when a proxy dropped it from the payload.
        return isinstance(payload, dict) and payload.get("type", event) in _TYPES

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event) if isinstance(payload, dict) else event
        if kind == "content_block_delta":
            block = payload["index"]
            if type(block) is not int:  # inline: this is the hot path
                index(block, "index")
            delta = payload["delta"]
            dtype = delta.get("type")
            if dtype == "input_json_delta":
                frag = delta["partial_json"]
                if type(frag) is not str:
                    text(frag, "partial_json")
                wire = wire_length(data, "partial_json", frag)
                return [_new(Ev, (kind, "args_delta", block, None, None, frag, wire, None, None))]
            if dtype == "text_delta":
                frag = delta["text"]
                if type(frag) is not str:
                    text(frag, "text")
                wire = wire_length(data, "text", frag)
                return [_new(Ev, (kind, "text_delta", block, None, None, frag, wire, None, None))]
            return [Ev(kind, "other", block)]  # thinking, signature, citations
        if kind == "content_block_start":
            block = index(payload["index"], "index")
            cb = payload["content_block"]
            if cb.get("type") in _CALL_BLOCKS:
                call_id, tool = text(cb["id"], "id"), text(cb["name"], "name")
                return [Ev(kind, "call_start", block, call_id, tool)]
            if cb.get("type") == "text":
                return [Ev(kind, "text_start", block)]
            return [Ev(kind, "other", block)]
        if kind == "content_block_stop":
            return [Ev(kind, "block_stop", index(payload["index"], "index"))]
        if kind == "message_stop":
            return [Ev(kind, "turn_stop")]
        if kind == "error":
            err = payload.get("error") or {}
            return [Ev(kind, "error", problem=f"provider error: {err.get('type')}: "
                                              f"{err.get('message')}")]
        return [Ev(kind, "other")]
