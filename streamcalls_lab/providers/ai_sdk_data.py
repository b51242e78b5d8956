"""The Vercel AI SDK 4 data stream: what ``useChat`` read from a server before AI SDK 5.

https://v4.ai-sdk.dev/docs/ai-sdk-ui/stream-protocol#data-stream-protocol

A stream one layer above the providers' (``streamText(...).toDataStreamResponse()``, header
``x-vercel-ai-data-stream: v1``), framed as type-prefixed lines (``framing/prefixed.py``):
each part is a code, a colon and its value as JSON (``@ai-sdk/ui-utils``'
``dataStreamParts``). A tool call is announced by ``b:`` (``toolCallId``, ``toolName``),
filled by ``c:`` ``argsTextDelta`` fragments, and ended by ``9:`` (the whole call, its
``args`` an object); a ``9:`` nothing announced (a provider that does not stream
arguments, or ``toolCallStreaming`` off, the default in AI SDK 4) announces the call and
gives its ``args``' exact text as one fragment, as does one whose arguments came in no
fragment. Calls are keyed by ``toolCallId``: each gets a ``block`` in order of first
appearance. ``0:`` is text; ``d:`` (finish message, its ``finishReason``) ends the turn;
``3:`` is the server's error; steps (``f:``, ``e:``), tool results (``a:``), data
(``2:``), annotations (``8:``), reasoning (``g:``, ``i:``, ``j:``), sources (``h:``) and
files (``k:``) are other. Each row's ``event`` is the part's name (``tool_call_delta``).
"""

from __future__ import annotations

import json
from typing import Any

from ..events import Ev, fragment_row, obj, stated, text
from ..turns import Role, Script, Text, WireFrame
from ._by_id import ById
from .as_written import object_text
from .spec import Envelope, Fields, WireFormat

PARTS = {  # code -> (the part's name, the JSON type of its value)
    "0": ("text", str), "2": ("data", list), "3": ("error", str),
    "8": ("message_annotations", list), "9": ("tool_call", dict), "a": ("tool_result", dict),
    "b": ("tool_call_streaming_start", dict), "c": ("tool_call_delta", dict),
    "d": ("finish_message", dict), "e": ("finish_step", dict), "f": ("start_step", dict),
    "g": ("reasoning", str), "h": ("source", dict), "i": ("redacted_reasoning", dict),
    "j": ("reasoning_signature", dict), "k": ("file", dict),
}
"""Every part of the protocol (``dataStreamParts``), by its code."""
NAMES = {code: name for code, (name, _) in PARTS.items()}


class AISDKDataStream(ById):
    name = "ai-sdk-data"

    def __init__(self) -> None:
        super().__init__()
        self._streamed: set[str] = set()  # calls b: announced (their c: parts are the text)

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        """A part's code (the framing's event) with a value of the part's JSON type."""
        part = PARTS.get(event)
        return part is not None and type(payload) is part[1]

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        part = PARTS.get(event)
        if part is None:
            raise TypeError(f"{event!r} is no part of the AI SDK 4 data stream (codes "
                            f"{', '.join(PARTS)})")
        kind, want = part
        if type(payload) is not want:
            raise TypeError(f"a {kind} part's value should be a {want.__name__}, not "
                            f"{type(payload).__name__}")
        if kind == "text":
            return [fragment_row(kind, "text_delta", None, payload, _string_length(data))]
        if kind == "tool_call_delta":
            return self._args_delta(kind, payload, data, "argsTextDelta")
        if kind == "tool_call_streaming_start":
            call_id, tool = self._announced(payload, "toolName")
            self._streamed.add(call_id)
            return [Ev(kind, "call_start", self._block(call_id), call_id, tool)]
        if kind == "tool_call":
            return self._whole(kind, payload, data)
        if kind == "finish_message":
            return [Ev(kind, "turn_stop", reason=stated(payload.get("finishReason")))]
        if kind == "error":
            return [Ev.provider_error(kind, payload)]
        if kind == "tool_result":
            return [Ev(kind, "other", call_id=text(payload["toolCallId"], "toolCallId"))]
        return [Ev(kind, "other")]  # steps, data, annotations, reasoning, sources, files

    def _whole(self, kind: str, payload: dict[str, Any], data: str) -> list[Ev]:
        """A call's end: announced here if nothing announced it, given its ``args``' exact
        text as one fragment if no fragment brought them, then stopped. A streamed call
        whose fragments were all empty ends with ``{}``, the SDK's reading of no text
        (``parseToolCall``): its text stays the empty text it was."""
        call_id = text(payload["toolCallId"], "toolCallId")
        tool = text(payload["toolName"], "toolName")
        args = obj(payload["args"], "args")
        out = []
        if call_id not in self._blocks:
            out.append(Ev(kind, "call_start", self._block(call_id), call_id, tool))
        block = self._blocks[call_id]
        if call_id not in self._filled and (args or call_id not in self._streamed):
            frag = object_text(data, "args", args, 0, len(data), "args")
            out.append(fragment_row(kind, "args_delta", block, frag, len(frag), None, call_id))
        out.append(Ev(kind, "block_stop", block, call_id, tool))
        return out


def _string_length(data: str) -> int | None:
    """The escaped length of a part whose value is one JSON string (``0:"…"``)."""
    token = data.strip()
    return len(token) - 2 if token.startswith('"') and token.endswith('"') else None


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as ``toDataStreamResponse()`` streams it with ``toolCallStreaming``: the step
    started (``f:``), each text fragment a ``0:`` part, each call announced (``b:``), filled
    (``c:``) and ended by ``9:`` with its parsed ``args`` (``{}`` for none); arguments that do
    not parse to an object end in the error the SDK streams instead (``3:``), the call left
    unended (so a finished call with invalid arguments cannot be written); then
    the step and the message finished (``e:``, ``d:``)."""
    frames = [WireFrame({"messageId": "msg-lab"}, "f", "head")]
    tools = False

    def add(code: str, payload: Any, role: Role, n: int | None = None,
            fragment: str | None = None, block: int | None = None) -> None:
        frames.append(WireFrame(payload, code, role, n, fragment, block))

    calls = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            for piece in seg.fragments:
                add("0", piece, "text", n, piece)
            continue
        tools = True
        who = {"toolCallId": seg.call_id, "toolName": seg.tool}
        add("b", who, "call_start", n, block=calls)
        for piece in seg.fragments:
            add("c", {"toolCallId": seg.call_id, "argsTextDelta": piece}, "args", n, piece,
                calls)
        try:  # (no text at all is {}, as the SDK's parseToolCall reads it)
            args = json.loads(seg.args) if seg.args.strip() else {}
        except ValueError:
            args = None
        if isinstance(args, dict):
            add("9", {**who, "args": args}, "call_stop", n, block=calls)
        else:
            add("3", f"Invalid arguments for tool {seg.tool}", "other", n)
        calls += 1
    reason = "tool-calls" if tools else "stop"
    usage = {"promptTokens": 0, "completionTokens": 0}
    add("e", {"finishReason": reason, "usage": usage, "isContinued": False}, "finish")
    add("d", {"finishReason": reason, "usage": usage}, "end")
    return frames


FORMAT = WireFormat.of(
    AISDKDataStream,
    framing="prefixed",
    docs="https://v4.ai-sdk.dev/docs/ai-sdk-ui/stream-protocol#data-stream-protocol",
    path="/api/chat",
    events={
        "call_start": ("tool_call_streaming_start", "tool_call"),
        "args_delta": ("tool_call_delta", "tool_call"),
        "block_stop": ("tool_call",),
        "text_delta": ("text",),
        "turn_stop": ("finish_message",),
        "error": ("error",),
        "other": tuple(sorted(set(NAMES.values()) - {
            "tool_call_streaming_start", "tool_call_delta", "tool_call", "text",
            "finish_message", "error"})),
    },
    fields=Fields(call_id=("toolCallId",), tool=("toolName",), fragment=("argsTextDelta",),
                  whole=("args",)),
    envelope=Envelope(
        containers=frozenset(("usage",)),  # every other part is flat: anything nested is data
        schema=frozenset(("toolName", "finishReason", "sourceType", "mimeType")),
        ids=frozenset(("messageId", "id")),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "line_separator_in_data")),
)
