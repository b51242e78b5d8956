"""OpenAI Responses: output items announced, argument deltas, a ``.done`` with the whole string.

https://platform.openai.com/docs/api-reference/responses-streaming
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from . import INT64, Ev, Index, decode_each, delta_row, index, maybe_text, text
from .wire import wire_length

_TURN_STOPS = frozenset(("response.completed", "response.incomplete", "response.failed"))
_DELTA_KINDS = {
    "response.function_call_arguments.delta": "args_delta",
    "response.output_text.delta": "text_delta",
}


class _DeltaEvent(msgspec.Struct, forbid_unknown_fields=True):
    """Any ``response.*.delta`` as a typed struct, for hot_rows: every field declared, so a
    payload that differs in any way is left to normalize()."""

    type: str
    output_index: Index
    delta: Any = None
    item_id: Any = None
    content_index: Any = None
    sequence_number: Any = None
    obfuscation: Any = None
    logprobs: Any = None
    command_index: Any = None
    summary_index: Any = None


_decode_delta = msgspec.json.Decoder(_DeltaEvent).decode


class OpenAIResponses:
    name = "openai-responses"

    def __init__(self) -> None:
        self._items: dict[str, int] = {}  # item id -> output_index, for events naming only the id

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return isinstance(payload, dict) and str(payload.get("type", event)).startswith("response.")

    def hot_rows(self, events: list[str], raws: list[bytes]) -> list[Sequence[Ev] | None]:
        """Every ``*.delta`` event at once: they need no item state when they carry
        ``output_index``, and they are nearly all of a stream."""
        rows: list[Sequence[Ev] | None] = [None] * len(raws)
        at = [i for i, event in enumerate(events) if event.endswith(".delta")]
        for i, p in zip(at, decode_each(_decode_delta, [raws[i] for i in at]), strict=True):
            if p is None or p.type != events[i]:
                continue
            kind = _DELTA_KINDS.get(p.type)
            frag = p.delta
            if kind is None:
                rows[i] = (Ev(p.type, "other", p.output_index),)
            elif type(frag) is str:
                wire = wire_length(raws[i].decode(), "delta", frag)
                rows[i] = (delta_row(p.type, kind, p.output_index, frag, wire),)
        return rows

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event)
        block = payload.get("output_index")
        if block is None:
            block = self._items.get(payload.get("item_id"))  # type: ignore[arg-type]
        else:
            if type(block) is not int or block not in INT64:  # inline: the hot path
                index(block, "output_index")
        row_kind = _DELTA_KINDS.get(kind)
        if row_kind is not None:
            frag = text(payload["delta"], "delta")
            return [delta_row(kind, row_kind, block, frag, wire_length(data, "delta", frag))]
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
