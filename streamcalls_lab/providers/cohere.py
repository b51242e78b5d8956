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

from ..events import Ev, array, fragment_row, index, maybe_text, obj, stated, text
from ..turns import (
    Script,
    Text,
    Transform,
    WireFrame,
    renumbered,
    shared,
    with_gaps,
)
from ._written import args_in_announcement, framer, restated, setter
from .as_written import wire_length
from .recognise import ByType
from .spec import Answer, Envelope, Fields, Streaming, WireFormat

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
            if args:  # sent in the start (the documented start has "")
                out.append(fragment_row(kind, "args_delta", block, args,
                                        wire_length(data, "arguments", args))._replace(
                    quirk="args_in_announcement: argument text in tool-call-start"))
            return out
        if kind == "tool-call-end":
            return [Ev(kind, "block_stop", index(payload["index"], "index"))]
        if kind == "content-start":
            content = obj(_message(payload).get("content") or {}, "message.content")
            return [Ev(kind, "text_start" if content.get("type", "text") == "text" else "other")]
        if kind == "message-end":
            delta = payload.get("delta")
            finish = delta.get("finish_reason") if isinstance(delta, dict) else None
            return [Ev(kind, "turn_stop", reason=stated(finish))]
        return [Ev(kind, "other")]  # message-start, content-end, citations, debug


def whole(payload: Any, data: str) -> Answer | None:
    """A whole ``/v2/chat`` response (``stream`` false): its calls (``function.arguments``
    the string sent), ``finish_reason`` and text content; None for any other payload (an
    event has a ``type`` and its message under ``delta``)."""
    if not (isinstance(payload, dict) and isinstance(payload.get("finish_reason"), str)
            and isinstance(payload.get("message"), dict)):
        return None
    message = payload["message"]
    calls = []
    for tc in array(message.get("tool_calls") or [], "message.tool_calls"):
        fn = obj(obj(tc, "tool_calls[]").get("function"), "tool_calls[].function")
        calls.append({"call_id": maybe_text(tc.get("id"), "tool_calls[].id"),
                      "tool": text(fn.get("name"), "function.name"),
                      "args": text(fn.get("arguments", ""), "function.arguments")})
    texts = [text(part["text"], "content[].text") for part in
             (obj(p, "content[]") for p in array(message.get("content") or [], "content"))
             if part.get("type") == "text"]
    return Answer(tuple(calls), payload["finish_reason"], "".join(texts))


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as ``/v2/chat`` streams it, each event named on its ``event:`` line: text as
    content blocks (their own ``index``), each call announced, filled and ended under its
    tool-call ``index``, then ``message-end`` with the finish reason."""
    frames: list[WireFrame] = []
    add = framer(frames, "type")
    add({"id": "lab", "type": "message-start", "delta": {"message": {
        "role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
        "citations": []}}}, "head")

    calls = texts = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            add({"type": "content-start", "index": texts, "delta": {"message": {
                "content": {"type": "text", "text": ""}}}}, "text_start", n)
            for piece in seg.fragments:
                add({"type": "content-delta", "index": texts, "delta": {"message": {
                    "content": {"text": piece}}}}, "text", n, piece)
            add({"type": "content-end", "index": texts}, "text_stop", n)
            texts += 1
            continue
        add({"type": "tool-call-start", "index": calls, "delta": {"message": {"tool_calls": {
            "id": seg.call_id, "type": "function",
            "function": {"name": seg.tool, "arguments": ""}}}}}, "call_start", n, block=calls)
        for piece in seg.fragments:
            add({"type": "tool-call-delta", "index": calls, "delta": {"message": {
                "tool_calls": {"function": {"arguments": piece}}}}}, "args", n, piece, calls)
        add({"type": "tool-call-end", "index": calls}, "call_stop", n, block=calls)
        calls += 1
    add({"type": "message-end", "delta": {
        "finish_reason": "TOOL_CALL" if calls else "COMPLETE",
        "usage": {"billed_units": {"input_tokens": 1, "output_tokens": 1},
                  "tokens": {"input_tokens": 1, "output_tokens": 1}}}}, "end")
    return frames


# -- the quirks a Cohere producer can send ----------------------------------------------------
_set_fragment = setter("delta", "message", "tool_calls", "function", "arguments")
_set_block = setter("index")


# Each call's first fragment sent as the ``arguments`` of ``tool-call-start``.
_args_in_announcement = args_in_announcement(_set_fragment)


QUIRKS: dict[str, Transform | None] = {
    "args_in_announcement": _args_in_announcement,
    "empty_arguments": None,
    # ``finish_reason: "COMPLETE"`` after calls (litellm#12862 names Cohere).
    "stop_reason_mismatch": restated("end", ("delta", "finish_reason"), "COMPLETE"),
    "index_gap": renumbered(_set_block, with_gaps),
    **shared(_set_block, _set_fragment),
}
"""What a Cohere producer can send, and how each is written."""


FORMAT = WireFormat.of(
    CohereChat,
    docs="https://docs.cohere.com/v2/docs/streaming",
    path="/v2/chat",
    events={
        "call_start": ("tool-call-start",),
        "args_delta": ("tool-call-delta", "tool-call-start"),
        "block_stop": ("tool-call-end",),
        "text_start": ("content-start",),
        "text_delta": ("content-delta", "tool-plan-delta"),
        "turn_stop": ("message-end",),
        "other": tuple(sorted(TYPES - {"tool-call-start", "tool-call-delta", "tool-call-end",
                                       "content-delta", "tool-plan-delta", "message-end"})),
    },
    fields=Fields(call_id=("id",), tool=("name",), fragment=("arguments",),
                  text=("text", "tool_plan")),
    envelope=Envelope(
        containers=frozenset(("delta", "message", "tool_calls", "function", "content",
                              "usage", "billed_units", "tokens")),
        schema=frozenset(("type", "role", "name", "finish_reason")),
        numbers=frozenset(("index", "input_tokens", "output_tokens", "cached_tokens")),
        ids=frozenset(("id",)),
        top=frozenset(("type", "index")),
    ),
    write=write,
    quirks=QUIRKS,
    tool_stop=frozenset(("TOOL_CALL",)),
    counts_calls=True,
    whole=whole,
    streaming=Streaming("stream"),
)
