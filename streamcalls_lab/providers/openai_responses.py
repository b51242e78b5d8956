"""OpenAI Responses: output items announced, argument deltas, a ``.done`` with the whole string.

https://platform.openai.com/docs/api-reference/responses-streaming

Three item types are calls whose input streams: ``function_call`` (JSON arguments),
``custom_tool_call`` (a custom tool's free-text ``input``: not JSON, ``calls()`` says so in
``args_format``) and ``mcp_call`` (JSON arguments of a remote MCP tool the server runs; it
has no ``call_id``, so its item ``id`` stands in).
"""

from __future__ import annotations

from operator import methodcaller
from typing import Any

import msgspec

from ..events import INT64, Ev, Hot, Index, Kind, decoded, fragment_row, index, maybe_text, text
from .as_written import wire_length

_TURN_STOPS = frozenset(("response.completed", "response.incomplete", "response.failed"))
_DELTA_KINDS: dict[str, Kind] = {  # read by normalize and by the fast path's _hot_rows
    "response.function_call_arguments.delta": "args_delta",
    "response.custom_tool_call_input.delta": "args_delta",
    "response.mcp_call_arguments.delta": "args_delta",
    "response.output_text.delta": "text_delta",
}
_DONE = {  # a done event -> the field repeating the whole input
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
    "response.mcp_call_arguments.done": "arguments",
}
CALL_ITEMS = {  # item type -> (the field naming the call, the field holding its input)
    "function_call": ("call_id", "arguments"),
    "custom_tool_call": ("call_id", "input"),
    "mcp_call": ("id", "arguments"),
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


def _call_item(item: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    """For an output item that is a call (:data:`CALL_ITEMS`): the field holding its input,
    its id and its tool's name; None for any other item."""
    fields = CALL_ITEMS.get(item.get("type"))  # type: ignore[arg-type]
    if fields is None:
        return None
    id_field, input_field = fields
    return (input_field, maybe_text(item.get(id_field), f"item.{id_field}"),
            maybe_text(item.get("name"), "item.name"))


def _hot_rows(at: list[int], structs: list[_DeltaEvent | None], events: list[str],
              raws: list[bytes], out: list[Any]) -> None:
    """A ``*.delta`` needs no item state when it carries ``output_index``."""
    for i, p in decoded(at, structs):
        if p.type != events[i]:
            continue
        kind = _DELTA_KINDS.get(p.type)
        if kind is None:
            out[i] = (Ev(p.type, "other", p.output_index),)
        elif type(p.delta) is str:  # (anything else: normalize says what is wrong)
            wire = wire_length(raws[i].decode(), "delta", p.delta)
            out[i] = (fragment_row(p.type, kind, p.output_index, p.delta, wire),)


_HOT = Hot(msgspec.json.Decoder(_DeltaEvent).decode, _hot_rows,
           methodcaller("endswith", ".delta"))  # nearly all of a stream


class OpenAIResponses:
    name = "openai-responses"
    hot = _HOT

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
            if type(block) is not int or block not in INT64:  # inline: the hot path
                index(block, "output_index")
        row_kind = _DELTA_KINDS.get(kind)
        if row_kind is not None:
            frag = text(payload["delta"], "delta")
            return [fragment_row(kind, row_kind, block, frag, wire_length(data, "delta", frag))]
        field = _DONE.get(kind)
        if field is not None:
            return [Ev(kind, "args_done", block, tool=maybe_text(payload.get("name"), "name"),
                       final=text(payload[field], field))]
        if kind == "response.output_item.added":
            item = payload["item"]
            if isinstance(item.get("id"), str) and block is not None:
                self._items[item["id"]] = block
            call = _call_item(item)
            if call is not None:
                input_field, call_id, tool = call
                out = [Ev(kind, "call_start", block, call_id, tool)]
                if item.get(input_field):
                    frag = text(item[input_field], f"item.{input_field}")
                    out.append(Ev(kind, "args_delta", block, fragment=frag,
                                  wire_chars=wire_length(data, input_field, frag)))
                return out
            if item.get("type") == "message":
                return [Ev(kind, "text_start", block)]
            return [Ev(kind, "other", block)]
        if kind == "response.output_item.done":
            item = payload["item"]
            call = _call_item(item)
            if call is not None:
                input_field, call_id, tool = call
                final = maybe_text(item.get(input_field), f"item.{input_field}")
                return [Ev(kind, "block_stop", block, call_id, tool, final=final)]
            return [Ev(kind, "block_stop", block)]
        if kind in _TURN_STOPS:
            return [Ev(kind, "turn_stop")]
        if kind == "error" or kind == "response.error":
            # Documented flat ({"message": …}); servers also nest it ({"error": {…}}).
            err = payload["error"] if isinstance(payload.get("error"), dict) else payload
            return [Ev.provider_error(kind, err.get("message"))]
        return [Ev(kind, "other", block)]
