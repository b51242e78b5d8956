"""OpenAI Responses: output items announced, argument deltas, a ``.done`` with the whole string.

https://platform.openai.com/docs/api-reference/responses-streaming
"""

from __future__ import annotations

from typing import Any

from . import Ev, index, maybe_text, text
from .wire import wire_length

_TURN_STOPS = frozenset(("response.completed", "response.incomplete", "response.failed"))
_new = tuple.__new__  # an Ev without NamedTuple's keyword handling, for the per-delta rows


class OpenAIResponses:
    name = "openai-responses"

    def __init__(self) -> None:
        self._items: dict[str, int] = {}  # item id -> output_index, for events naming only the id

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return isinstance(payload, dict) and str(payload.get("type", event)).startswith("response.")

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event)
        block = payload.get("output_index")
        if block is None:
            block = self._items.get(payload.get("item_id"))  # type: ignore[arg-type]
        else:
            if type(block) is not int:  # inline: this is the hot path
                index(block, "output_index")
        if kind == "response.function_call_arguments.delta":
            frag = payload["delta"]
            if type(frag) is not str:
                text(frag, "delta")
            wire = wire_length(data, "delta", frag)
            return [_new(Ev, (kind, "args_delta", block, None, None, frag, wire, None, None))]
        if kind == "response.output_text.delta":
            frag = payload["delta"]
            if type(frag) is not str:
                text(frag, "delta")
            wire = wire_length(data, "delta", frag)
            return [_new(Ev, (kind, "text_delta", block, None, None, frag, wire, None, None))]
        if kind == "response.function_call_arguments.done":
            return [Ev(kind, "args_done", block, tool=maybe_text(payload.get("name"), "name"),
                       final=text(payload["arguments"], "arguments"))]
        if kind == "response.output_item.added":
            item = payload["item"]
            if isinstance(item.get("id"), str) and block is not None:
                self._items[item["id"]] = block
            if item.get("type") == "function_call":
                call_id = maybe_text(item.get("call_id"), "item.call_id")
                tool = maybe_text(item.get("name"), "item.name")
                out = [Ev(kind, "call_start", block, call_id, tool)]
                if item.get("arguments"):
                    frag = text(item["arguments"], "item.arguments")
                    out.append(Ev(kind, "args_delta", block, fragment=frag,
                                  wire_chars=wire_length(data, "arguments", frag)))
                return out
            if item.get("type") == "message":
                return [Ev(kind, "text_start", block)]
            return [Ev(kind, "other", block)]
        if kind == "response.output_item.done":
            item = payload["item"]
            if item.get("type") == "function_call":
                call_id = maybe_text(item.get("call_id"), "item.call_id")
                tool = maybe_text(item.get("name"), "item.name")
                final = maybe_text(item.get("arguments"), "item.arguments")
                return [Ev(kind, "block_stop", block, call_id, tool, final=final)]
            return [Ev(kind, "block_stop", block)]
        if kind in _TURN_STOPS:
            return [Ev(kind, "turn_stop")]
        if kind == "error" or kind == "response.error":
            return [Ev(kind, "error", problem=f"provider error: {payload.get('message')}")]
        return [Ev(kind, "other", block)]
