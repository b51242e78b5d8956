"""Mistral's Conversations API (Agents): the events of a conversation response.

https://docs.mistral.ai/api/#tag/beta.conversations

Every event is an SSE ``event:`` line and a ``data:`` line of JSON naming itself in
``type`` (mistralai's ``SSETypes``), with no ``[DONE]``. A function call the client is to
make streams as ``function.call.delta`` events, each carrying the call's ``tool_call_id``,
its entry ``id``, its ``name`` (repeated on every delta: the same call, never a name to
append) and an ``arguments`` fragment; the first delta of a ``tool_call_id`` announces the
call, and only ``conversation.response.done`` ends it (the API sends no per-call end). A
built-in tool the server runs (web search, code interpreter ...) streams as
``tool.execution.started`` (its ``id``, ``name`` and the first ``arguments``),
``tool.execution.delta`` fragments and ``tool.execution.done``, keyed by ``id``. Calls get a
``block`` in order of first appearance. ``message.output.delta`` is text when its
``content`` is a string or a ``text`` chunk (thinking, references and files are other).
``conversation.response.error`` is the server's error; agent handoffs are other.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, fragment_row, maybe_text, obj, text
from ..turns import Script, Text, WireFrame
from ._identity import Identities
from ._written import framer
from .as_written import wire_length
from .recognise import ByType
from .spec import Envelope, Fields, WireFormat

TYPES = frozenset((
    "conversation.response.started", "conversation.response.done",
    "conversation.response.error", "message.output.delta", "tool.execution.started",
    "tool.execution.delta", "tool.execution.done", "agent.handoff.started",
    "agent.handoff.done", "function.call.delta",
))
"""Every event of a conversation stream (mistralai's ``SSETypes``)."""
_FUNCTION = "function.call.delta"
_STARTED, _DELTA, _DONE = "tool.execution.started", "tool.execution.delta", "tool.execution.done"
_END = "conversation.response.done"


class MistralConversations:
    name = "mistral-conversations"
    hot = None  # calls are keyed by id: every frame goes through normalize
    sniff = ByType(TYPES)

    def __init__(self) -> None:
        self._blocks: dict[str, int] = {}  # a call's tool_call_id (a tool's id) -> block
        # announced, not yet ended, in order: a dict, so each frame's lookup is O(1) (a list
        # made a turn of n open calls quadratic)
        self._open: dict[str, None] = {}
        self._calls = 0
        self._who = Identities()  # each call's name, by block (its id is its key)

    def _announce(self, key: str, tool: str) -> int:
        self._open[key] = None
        self._blocks[key] = self._calls
        self._who.announce(self._calls, key, tool)
        self._calls += 1
        return self._calls - 1

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload, kind = self.sniff.typed(event, payload, "a conversation event")
        if kind == _FUNCTION:
            call_id = text(payload["tool_call_id"], "tool_call_id")
            text(payload["id"], "id")
            tool = text(payload["name"], "name")
            return self._fragment(kind, call_id, tool, payload, data)
        if kind in (_STARTED, _DELTA):
            return self._fragment(kind, text(payload["id"], "id"),
                                  text(payload["name"], "name"), payload, data)
        if kind == _DONE:
            key = text(payload["id"], "id")
            tool = maybe_text(payload.get("name"), "name")  # (repeated: the same tool)
            if key in self._open:
                del self._open[key]
                block = self._blocks[key]
                return self._who.check([Ev(kind, "block_stop", block, key, tool)], kind,
                                       block, key, tool)
            return [Ev(kind, "other", call_id=key)]
        if kind == "message.output.delta":
            content = payload["content"]
            if isinstance(content, str):
                return [fragment_row(kind, "text_delta", None, content,
                                     wire_length(data, "content", content))]
            content = obj(content, "content")
            if content.get("type") == "text":
                frag = text(content["text"], "content.text")
                return [fragment_row(kind, "text_delta", None, frag,
                                     wire_length(data, "text", frag))]
            return [Ev(kind, "other")]  # thinking, tool references, files
        if kind == _END:
            stops = [Ev(kind, "block_stop", self._blocks[k], k) for k in self._open]
            self._open.clear()
            return [*stops, Ev(kind, "turn_stop")]
        if kind == "conversation.response.error":
            return [Ev.provider_error(kind, payload.get("message"), payload.get("code"))]
        return [Ev(kind, "other")]  # the response started, agent handoffs

    def _fragment(self, kind: str, key: str, tool: str, payload: dict[str, Any],
                  data: str) -> list[Ev]:
        """A call's delta: it announces the call the first time its key comes (a key that
        returns after its call ended is a new call); its ``arguments`` are a fragment."""
        frag = maybe_text(payload.get("arguments"), "arguments")
        out = []
        if key not in self._open:
            out.append(Ev(kind, "call_start", self._announce(key, tool), key, tool))
            if not frag:
                return out
            changed = None
        else:  # every delta repeats the name: another one is no new call, and no rename
            changed = self._who.see(kind, self._blocks[key], key, tool, self._blocks[key])
        if frag is not None:  # (the name rides on the row only where it differs)
            out.append(fragment_row(kind, "args_delta", self._blocks[key], frag,
                                    wire_length(data, "arguments", frag), None, key,
                                    None if changed is None else tool))
        out = out or [Ev(kind, "other", self._blocks[key], key)]
        return out if changed is None else [*out, changed]


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as ``/v1/conversations`` streams it: ``conversation.response.started``, each
    text segment ``message.output.delta`` fragments of one output entry, each call
    ``function.call.delta`` fragments of one entry (the name and ids on every one; a call
    with no fragments sends one empty), then ``conversation.response.done`` with usage."""
    model = turn.style.model if turn.style else turn.model
    frames: list[WireFrame] = []
    add = framer(frames, "type")
    add({"type": "conversation.response.started", "conversation_id": "conv_lab"}, "head")

    calls = 0
    for n, seg in enumerate(turn.segments):
        entry = {"output_index": n, "id": f"{'msg' if isinstance(seg, Text) else 'fc'}_lab{n}"}
        if isinstance(seg, Text):
            for piece in seg.fragments:
                add({"type": "message.output.delta", **entry, "content_index": 0,
                     "model": model, "role": "assistant", "content": piece},
                    "text", n, piece)
            continue
        for k, piece in enumerate(seg.fragments or ("",)):
            add({"type": _FUNCTION, **entry, "name": seg.tool, "tool_call_id": seg.call_id,
                 "arguments": piece, "model": model}, "call_start" if k == 0 else "args",
                n, piece, calls)
        calls += 1
    add({"type": _END, "usage": {"prompt_tokens": 0, "completion_tokens": 0,
                                 "total_tokens": 0}}, "end")
    return frames


FORMAT = WireFormat.of(
    MistralConversations,
    docs="https://docs.mistral.ai/api/#tag/beta.conversations",
    path="/v1/conversations",
    events={
        "call_start": (_FUNCTION, _STARTED, _DELTA),
        "args_delta": (_FUNCTION, _STARTED, _DELTA),
        "block_stop": (_DONE, _END),
        "text_delta": ("message.output.delta",),
        "turn_stop": (_END,),
        "error": ("conversation.response.error",),
        "other": ("conversation.response.started", "message.output.delta", _FUNCTION,
                  _STARTED, _DELTA, _DONE, "agent.handoff.started", "agent.handoff.done"),
    },
    fields=Fields(call_id=("tool_call_id",), tool=("name",), fragment=("arguments",),
                  text=("content", "text")),
    envelope=Envelope(
        containers=frozenset(("usage", "content")),
        schema=frozenset(("type", "role", "name", "model")),
        numbers=frozenset(("output_index", "content_index")),
        ids=frozenset(("id", "conversation_id", "agent_id", "previous_agent_id",
                       "next_agent_id")),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "invalid_arguments",
                          "line_separator_in_data")),  # in what is said: the writer's as is
    call_ids=("", 9),
)
