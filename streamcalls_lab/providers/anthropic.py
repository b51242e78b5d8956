"""Anthropic Messages: content blocks announced, filled by deltas, closed by a stop.

https://docs.anthropic.com/en/api/messages-streaming

Server tools (``server_tool_use``: web search, web fetch, code execution) and MCP tools
(``mcp_tool_use``) are calls like ``tool_use``; their result blocks (``*_tool_result``) are
``other`` rows whose ``call_id`` is the ``tool_use_id`` they answer. A call's input given
whole in its start (a server tool called from code execution) is one fragment, the object
as sent. Fine-grained tool streaming sends the same events, but its arguments may not be
valid JSON: that is ``valid_json`` False in ``calls()``, never a load error.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

from ..events import INT64, Ev, Hot, Index, Kind, decoded, fragment_row, index, maybe_text, text
from .as_written import object_text, wire_length
from .recognise import ByType

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
_FRAGMENTS: dict[str, tuple[Kind, str]] = {  # delta type -> row kind, field of the fragment
    "input_json_delta": ("args_delta", "partial_json"),
    "text_delta": ("text_delta", "text"),
}  # normalize and the typed structs below (for the fast path) both read this table


# A content_block_delta as a typed struct, for hot_rows: every field declared, so a payload
# that differs in any way is left to normalize(). Each delta type names its kind and key.
class _Delta(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    kind: ClassVar[Kind] = "other"
    key: ClassVar[str] = ""
    fragment: ClassVar[str | None] = None


class _JsonDelta(_Delta, tag="input_json_delta"):
    kind, key = _FRAGMENTS["input_json_delta"]
    fragment: str = msgspec.field(name="partial_json")  # type: ignore[misc]


class _TextDelta(_Delta, tag="text_delta"):
    kind, key = _FRAGMENTS["text_delta"]
    fragment: str = msgspec.field(name="text")  # type: ignore[misc]


class _ThinkingDelta(_Delta, tag="thinking_delta"):
    thinking: Any = None


class _SignatureDelta(_Delta, tag="signature_delta"):
    signature: Any = None


class _CitationsDelta(_Delta, tag="citations_delta"):
    citation: Any = None


class _DeltaEvent(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["content_block_delta"]
    index: Index
    delta: _JsonDelta | _TextDelta | _ThinkingDelta | _SignatureDelta | _CitationsDelta


def _hot_rows(at: list[int], structs: list[_DeltaEvent | None], events: list[str],
              raws: list[bytes], out: list[Any]) -> None:
    for i, p in decoded(at, structs):
        d = p.delta  # its kind and key come from _FRAGMENTS, as in normalize
        frag = d.fragment
        wire = None if frag is None else wire_length(raws[i].decode(), d.key, frag)
        out[i] = (fragment_row("content_block_delta", d.kind, p.index, frag, wire),)


_HOT = Hot(msgspec.json.Decoder(_DeltaEvent).decode, _hot_rows,
           "content_block_delta".__eq__)  # all but a handful of a stream's frames


def _whole_input(data: str, given: dict[str, Any], block: int) -> Ev:
    """A call's input given whole in its start: one fragment, the object exactly as sent."""
    frag = object_text(data, "input", given, data.find('"content_block"'), len(data),
                       "content_block.input")
    return fragment_row("content_block_start", "args_delta", block, frag, len(frag))


class AnthropicMessages:
    name = "anthropic-messages"
    hot = _HOT
    sniff = ByType(_TYPES)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event) if isinstance(payload, dict) else event
        if kind == "content_block_delta":
            block = payload["index"]
            if type(block) is not int or block not in INT64:  # inline: the hot path
                index(block, "index")
            delta = payload["delta"]
            row_kind, key = _FRAGMENTS.get(delta.get("type"), ("other", ""))
            if not key:
                return [Ev(kind, "other", block)]  # thinking, signature, citations
            frag = text(delta[key], key)
            return [fragment_row(kind, row_kind, block, frag, wire_length(data, key, frag))]
        if kind == "content_block_start":
            block = index(payload["index"], "index")
            cb = payload["content_block"]
            if cb.get("type") in _CALL_BLOCKS:
                call_id, tool = text(cb["id"], "id"), text(cb["name"], "name")
                out = [Ev(kind, "call_start", block, call_id, tool)]
                given = cb.get("input")
                if given:  # sent whole in the start (a server tool called from code)
                    out.append(_whole_input(data, given, block))
                return out
            if cb.get("type") == "text":
                return [Ev(kind, "text_start", block)]
            # A server or MCP tool's result block names the call it answers.
            return [Ev(kind, "other", block, maybe_text(cb.get("tool_use_id"), "tool_use_id"))]
        if kind == "content_block_stop":
            return [Ev(kind, "block_stop", index(payload["index"], "index"))]
        if kind == "message_stop":
            return [Ev(kind, "turn_stop")]
        if kind == "error":
            err = payload.get("error") or {}
            return [Ev.provider_error(kind, err.get("message"), str(err.get("type")))]
        return [Ev(kind, "other")]
