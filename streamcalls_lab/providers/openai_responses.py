"""OpenAI Responses: output items announced, argument deltas, a ``.done`` with the whole string.

https://platform.openai.com/docs/api-reference/responses-streaming
"""

from __future__ import annotations

from typing import Any

from . import Ev
from .wire import wire_length

_TURN_STOPS = frozenset(("response.completed", "response.incomplete", "response.failed"))
_new = tuple.__new__  # an Ev without NamedTuple's keyword handling, for the per-delta rows


class OpenAIResponses:
    name = "openai-responses"

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return isinstance(payload, dict) and str(payload.get("type", "")).startswith("response.")

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event)
        block = payload.get("output_index")
        if kind == "response.function_call_arguments.delta":
            frag = payload["delta"]
            wire = wire_length(data, "delta", frag)
            return [_new(Ev, (kind, "args_delta", block, None, None, frag, wire, None, None))]
        if kind == "response.output_text.delta":
            frag = payload["delta"]
            wire = wire_length(data, "delta", frag)
            return [_new(Ev, (kind, "text_delta", block, None, None, frag, wire, None, None))]
        if kind == "response.function_call_arguments.done":
            return [Ev(kind, "args_done", block, tool=payload.get("name"),
                       final=payload["arguments"])]
        if kind == "response.output_item.added":
            item = payload["item"]
            if item.get("type") == "function_call":
                out = [Ev(kind, "call_start", block, item.get("call_id"), item.get("name"))]
                if item.get("arguments"):
                    frag = item["arguments"]
                    out.append(Ev(kind, "args_delta", block, fragment=frag,
                                  wire_chars=wire_length(data, "arguments", frag)))
                return out
            if item.get("type") == "message":
                return [Ev(kind, "text_start", block)]
            return [Ev(kind, "other", block)]
        if kind == "response.output_item.done":
            item = payload["item"]
            if item.get("type") == "function_call":
                return [Ev(kind, "block_stop", block, item.get("call_id"), item.get("name"),
                           final=item.get("arguments"))]
            return [Ev(kind, "block_stop", block)]
        if kind in _TURN_STOPS:
            return [Ev(kind, "turn_stop")]
        if kind == "error" or kind == "response.error":
            return [Ev(kind, "error", problem=f"provider error: {payload.get('message')}")]
        return [Ev(kind, "other", block)]
