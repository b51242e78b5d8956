"""The Vercel AI SDK UI message stream (``ai`` 5 and 6): what ``useChat`` reads from a server.

https://ai-sdk.dev/docs/ai-sdk-ui/stream-protocol

A stream one layer above the providers': an agent server (``streamText(...)
.toUIMessageStreamResponse()``) re-encodes the model's stream as typed chunks for the
browser, each an SSE ``data:`` line of compact JSON (no ``event:`` line), ``data: [DONE]``
last, under the header ``x-vercel-ai-ui-message-stream: v1``. The same rules hold here: a
tool call is announced by ``tool-input-start`` (``toolCallId``, ``toolName``), filled by
``tool-input-delta`` ``inputTextDelta`` fragments, and only ``tool-input-available`` (its
whole ``input`` as a JSON value) or ``tool-input-error`` (the SDK could not parse it, or
knows no such tool) ends it. Calls are keyed by ``toolCallId``, not an index: each gets a
``block`` in order of first appearance. A call no ``tool-input-start`` announced (a
provider that does not stream arguments) is announced, given its ``input``'s exact text as
one fragment and stopped by its ``tool-input-available`` alone; so is an announced call
whose input arrived in no fragment. Text parts (``text-start``, ``text-delta``,
``text-end``, keyed by their own ``id``) have no block. ``finish`` ends the turn (and
``[DONE]`` the stream); an ``error`` chunk is the server's error; steps, reasoning, tool
results, sources, files and ``data-*`` parts are ``other``.
"""

from __future__ import annotations

import json
from typing import Any

from ..events import DONE, Ev, fragment_row, maybe_text, stated, text
from ..turns import Script, Text, WireFrame
from ._by_id import ById
from ._written import framer
from .as_written import value_text, wire_length
from .recognise import ByType
from .spec import Envelope, Fields, WireFormat

TYPES = frozenset((
    "start", "start-step", "finish-step", "finish", "text-start", "text-delta", "text-end",
    "reasoning-start", "reasoning-delta", "reasoning-end", "tool-input-start",
    "tool-input-delta", "tool-input-available", "tool-input-error", "tool-output-available",
    "tool-output-error", "tool-output-denied", "tool-approval-request", "source-url",
    "source-document", "message-metadata",
))
"""The chunk types that name this format (``ai``'s ``uiMessageChunkSchema``); ``error``,
``abort``, ``file`` and ``data-*`` parts are read once the format is known."""
_READ_LATER = frozenset(("error", "abort", "file"))


def own(event: str, payload: Any) -> bool:
    """An ``error``, ``abort``, ``file`` or ``data-*`` chunk: the format's own, though no
    signature of it (a stream of many data parts or files is no misread)."""
    kind = payload.get("type") if isinstance(payload, dict) else None
    return isinstance(kind, str) and (kind in _READ_LATER or kind.startswith("data-"))


_ENDS = ("tool-input-available", "tool-input-error")
_ANSWERS = frozenset(("tool-output-available", "tool-output-error", "tool-output-denied",
                      "tool-approval-request"))  # about a call, by its toolCallId


class AISDKUIStream(ById):
    name = "ai-sdk-ui"
    sniff = ByType(TYPES)

    def __init__(self) -> None:
        super().__init__()
        self._plain: set[str] = set()  # calls announced with inputEncoding "text"

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload, kind = self.sniff.typed(event, payload, "a UI message chunk")
        if kind == "tool-input-delta":
            return self._args_delta(kind, payload, data, "inputTextDelta")
        if kind == "text-delta":
            maybe_text(payload.get("id"), "id")
            frag = text(payload["delta"], "delta")
            return [fragment_row(kind, "text_delta", None, frag, wire_length(data, "delta", frag))]
        if kind == "tool-input-start":
            call_id, tool = self._announced(payload, "toolName")
            # (a text-encoded call's input is its raw text, not a JSON value)
            if payload.get("inputEncoding") == "text":
                self._plain.add(call_id)
            else:
                self._plain.discard(call_id)
            block = self._block(call_id)
            self._who.announce(block, call_id, tool)
            return [Ev(kind, "call_start", block, call_id, tool)]
        if kind in _ENDS:
            return self._end(kind, payload, data)
        if kind == "text-start":
            return [Ev(kind, "text_start")]
        if kind == "finish":  # (after calls the server ran, "stop" is no mismatch: no tool_stop)
            return [Ev(kind, "turn_stop", reason=stated(payload.get("finishReason")))]
        if kind == "error":
            return [Ev.provider_error(kind, payload.get("errorText"))]
        if kind in _ANSWERS:
            return [Ev(kind, "other", call_id=text(payload["toolCallId"], "toolCallId"))]
        return [Ev(kind, "other")]  # start, steps, text-end, reasoning, sources, data-*

    def _end(self, kind: str, payload: dict[str, Any], data: str) -> list[Ev]:
        """A call's end: announced here if nothing announced it, given its input as one
        fragment if no fragment brought it, then stopped."""
        call_id = text(payload["toolCallId"], "toolCallId")
        tool = text(payload["toolName"], "toolName")
        out = []
        if call_id not in self._blocks:
            out.append(Ev(kind, "call_start", self._block(call_id), call_id, tool))
            self._who.announce(self._blocks[call_id], call_id, tool)
        block = self._blocks[call_id]
        given = payload.get("input")
        if call_id not in self._filled and given is not None:
            # The SDK's unparsed text (an error's, a text-encoded call's) is the input as it
            # came; anything else is a parsed JSON value of any type: its text as written.
            if isinstance(given, str) and (kind == "tool-input-error" or call_id in self._plain):
                frag, wire = given, wire_length(data, "input", given)
            else:
                frag = value_text(data, "input", given, 0, len(data), "input")
                wire = len(frag)
            out.append(fragment_row(kind, "args_delta", block, frag, wire, None, call_id))
        out.append(Ev(kind, "block_stop", block, call_id, tool))
        return self._who.check(out, kind, block, call_id, tool)  # the end repeats the name


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as ``toUIMessageStreamResponse()`` streams it: ``start``, one step, each text
    segment a text part (``txt-0``...), each call announced, filled by ``inputTextDelta``
    fragments and ended by ``tool-input-available`` with its parsed input (arguments that
    do not parse end it with ``tool-input-error``, the text as ``input``), then
    ``finish-step``, ``finish`` and ``[DONE]``. Keys are only those ``ai`` 5 accepts."""
    frames: list[WireFrame] = []
    add = framer(frames)
    add({"type": "start", "messageId": "msg_lab"}, "head")
    add({"type": "start-step"})

    calls = texts = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            part = f"txt-{texts}"
            add({"type": "text-start", "id": part}, "text_start", n)
            for piece in seg.fragments:
                add({"type": "text-delta", "id": part, "delta": piece}, "text", n, piece)
            add({"type": "text-end", "id": part}, "text_stop", n)
            texts += 1
            continue
        who = {"toolCallId": seg.call_id, "toolName": seg.tool}
        add({"type": "tool-input-start", **who}, "call_start", n, block=calls)
        for piece in seg.fragments:
            add({"type": "tool-input-delta", "toolCallId": seg.call_id,
                 "inputTextDelta": piece}, "args", n, piece, calls)
        try:
            end = {"type": "tool-input-available", **who, "input": json.loads(seg.args)}
        except ValueError:
            end = {"type": "tool-input-error", **who, "input": seg.args,
                   "errorText": "Invalid input for tool"}
        add(end, "call_stop", n, block=calls)
        calls += 1
    add({"type": "finish-step"})
    add({"type": "finish"}, "finish")
    add(DONE, "end")
    return frames


FORMAT = WireFormat.of(
    AISDKUIStream,
    docs="https://ai-sdk.dev/docs/ai-sdk-ui/stream-protocol",
    path="/api/chat",
    events={
        "call_start": ("tool-input-start", *_ENDS),
        "args_delta": ("tool-input-delta", *_ENDS),
        "block_stop": _ENDS,
        "text_start": ("text-start",),
        "text_delta": ("text-delta",),
        "turn_stop": ("finish", "[DONE]"),
        "error": ("error",),
        "other": tuple(sorted(TYPES - {"tool-input-start", "tool-input-delta", *_ENDS,
                                       "text-start", "text-delta", "finish"})),
    },
    fields=Fields(call_id=("toolCallId",), tool=("toolName",), fragment=("inputTextDelta",),
                  whole=("input",), text=("delta",)),
    envelope=Envelope(
        containers=frozenset(),  # every chunk is flat: anything nested is data
        schema=frozenset(("type", "toolName", "finishReason")),
        ids=frozenset(("id", "messageId", "approvalId", "sourceId")),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "invalid_arguments",
                          "line_separator_in_data")),  # in what is said: the writer's as is
    own=own,
)
