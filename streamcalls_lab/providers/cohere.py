"""Cohere v2 chat (``POST /v2/chat``, ``stream: true``): typed events over SSE.

https://docs.cohere.com/v2/docs/streaming and https://docs.cohere.com/v2/docs/tool-use-streaming

Every payload carries its ``type`` (kebab-case, which no other format uses). A tool call is
announced by ``tool-call-start`` (its id and name under ``delta.message.tool_calls``, an
object, not a list), filled by ``tool-call-delta`` argument fragments and closed by
``tool-call-end``; ``index`` counts the tool calls, apart from the content blocks, so a call's
``block`` is its tool-call index and text rows have none (as in Chat). ``tool-plan-delta`` is
the model's plan before the calls: text. ``message-end`` ends the turn.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, fragment_row, index, maybe_text, obj, text
from .as_written import wire_length
from .recognise import ByType

TYPES = frozenset(
    (
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
        "debug",
    )
)


def _message(payload: dict[str, Any]) -> dict[str, Any]:
    return obj(obj(payload["delta"], "delta").get("message") or {}, "delta.message")


class CohereChat:
    name = "cohere-chat"
    hot = None  # no fast path yet: every frame goes through normalize
    sniff = ByType(TYPES)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload, kind = self.sniff.typed(event, payload, "a Cohere event")
        if kind == "tool-call-delta":
            fn = obj(obj(_message(payload)["tool_calls"], "tool_calls").get("function") or {},
                     "tool_calls.function")
            frag = text(fn["arguments"], "function.arguments")
            block = index(payload["index"], "index")
            return [fragment_row(kind, "args_delta", block, frag,
                              wire_length(data, "arguments", frag))]
        if kind in ("content-delta", "tool-plan-delta"):
            message = _message(payload)
            if kind == "tool-plan-delta":
                frag, key = text(message["tool_plan"], "tool_plan"), "tool_plan"
            else:
                content = obj(message["content"], "message.content")
                if "text" not in content:
                    return [Ev(kind, "other")]  # thinking
                frag, key = text(content["text"], "content.text"), "text"
            return [fragment_row(kind, "text_delta", None, frag, wire_length(data, key, frag))]
        if kind == "tool-call-start":
            call = obj(_message(payload)["tool_calls"], "tool_calls")
            fn = obj(call.get("function") or {}, "tool_calls.function")
            block = index(payload["index"], "index")
            out = [Ev(kind, "call_start", block, maybe_text(call.get("id"), "tool_calls.id"),
                      maybe_text(fn.get("name"), "function.name"))]
            args = maybe_text(fn.get("arguments"), "function.arguments")
            if args:  # sent whole in the start (the documented start has "")
                out.append(fragment_row(kind, "args_delta", block, args,
                                     wire_length(data, "arguments", args)))
            return out
        if kind == "tool-call-end":
            return [Ev(kind, "block_stop", index(payload["index"], "index"))]
        if kind == "content-start":
            content = obj(_message(payload).get("content") or {}, "message.content")
            return [Ev(kind, "text_start" if content.get("type", "text") == "text" else "other")]
        if kind == "message-end":
            return [Ev(kind, "turn_stop")]
        return [Ev(kind, "other")]  # message-start, content-end, citations, debug
