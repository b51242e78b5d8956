"""AG-UI (the Agent-User Interaction protocol): the events an agent server streams to its UI.

https://docs.ag-ui.com/concepts/events

A stream one layer above the providers': every event is an SSE ``data:`` line of compact,
camelCase JSON naming itself in ``type`` (UPPER_SNAKE), as the SDKs' ``EventEncoder``
writes it (optional fields left out, no ``[DONE]``). The same rules hold here: a tool call is
announced by ``TOOL_CALL_START`` (``toolCallId``, ``toolCallName``), filled by
``TOOL_CALL_ARGS`` ``delta`` fragments, and only ``TOOL_CALL_END`` ends it. Several calls
may be open at once, keyed by ``toolCallId``: each gets a ``block`` in order of first
appearance. ``TOOL_CALL_CHUNK`` is the shorthand the client expands (``transformChunks``):
the first chunk of a call (``toolCallId`` and ``toolCallName``) announces it, a chunk's
``delta`` is a fragment of the call being chunked, and that call ends when a chunk names
another ``toolCallId`` or any event but ``RAW``, ``ACTIVITY_*`` and the like arrives (the
row of its end is then that event's). Text messages (``TEXT_MESSAGE_START`` / ``_CONTENT``
/ ``_END``, and ``TEXT_MESSAGE_CHUNK``) have no block. ``RUN_FINISHED`` ends the turn,
``RUN_ERROR`` is the server's error; steps, state and message snapshots, tool results,
reasoning, ``RAW`` and ``CUSTOM`` events are ``other``.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, fragment_row, maybe_text, stated, text
from ..turns import Script, Text, WireFrame
from ._by_id import ById
from ._written import framer
from .as_written import wire_length
from .recognise import ByType
from .spec import Envelope, Fields, WireFormat

_PASSING = frozenset((  # events the client passes through without closing a chunked call
    "RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE",
    "SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR",
))
TYPES = frozenset((
    "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED",
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "STATE_DELTA", "MESSAGES_SNAPSHOT", "CUSTOM",
    "THINKING_START", "THINKING_END", "THINKING_TEXT_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_END", "REASONING_START",
    "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK", "REASONING_END", *_PASSING,
))
"""Every event type of the protocol (``@ag-ui/core``'s ``EventType``)."""


class AGUI(ById):
    name = "ag-ui"
    sniff = ByType(TYPES)

    def __init__(self) -> None:
        super().__init__()
        self._chunked: str | None = None  # the call TOOL_CALL_CHUNKs are filling

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        # Every field is checked before any state changes: a problem event ends nothing.
        payload, kind = self.sniff.typed(event, payload, "an AG-UI event")
        if kind == "TOOL_CALL_CHUNK":
            return self._chunk(kind, payload, data)
        row = _row(kind, payload, data)
        out = [] if kind in _PASSING else self._end_chunked(kind)
        if row.kind in ("call_start", "args_delta", "block_stop"):
            row = row._replace(block=self._block(text(row.call_id, "toolCallId")))
            if row.kind == "call_start":
                self._who.announce(row.block, row.call_id, row.tool)
        return [*out, row]

    def _end_chunked(self, kind: str) -> list[Ev]:
        """The end of the call being chunked, if one is (on this event's row)."""
        call_id, self._chunked = self._chunked, None
        return [] if call_id is None else [Ev(kind, "block_stop", self._blocks[call_id],
                                              call_id)]

    def _chunk(self, kind: str, payload: dict[str, Any], data: str) -> list[Ev]:
        call_id = maybe_text(payload.get("toolCallId"), "toolCallId")
        tool = maybe_text(payload.get("toolCallName"), "toolCallName")
        frag = maybe_text(payload.get("delta"), "delta")
        another = call_id is not None and call_id != self._chunked
        if (another or self._chunked is None) and (call_id is None or tool is None):
            raise TypeError("TOOL_CALL_CHUNK: the first chunk of a call should carry "
                            "toolCallId and toolCallName")
        out = self._end_chunked(kind) if another else []
        changed = None
        if self._chunked is None:
            self._chunked = call_id
            out.append(Ev(kind, "call_start", self._block(call_id), call_id, tool))
            self._who.announce(self._blocks[call_id], call_id, tool)
        elif tool:  # a later chunk that repeats the name: the same one, or a change
            block = self._blocks[self._chunked]
            changed = self._who.see(kind, block, call_id, tool, block)
        if frag is not None:  # (the name rides on the row only where it differs)
            out.append(fragment_row(kind, "args_delta", self._blocks[self._chunked], frag,
                                    wire_length(data, "delta", frag), None, call_id,
                                    None if changed is None else tool))
        return out if changed is None else [*out, changed]


def _row(kind: str, payload: dict[str, Any], data: str) -> Ev:
    """An event's own row, its fields checked; a call's ``block`` is the reader's to give."""
    if kind == "TOOL_CALL_ARGS":
        frag = text(payload["delta"], "delta")
        return fragment_row(kind, "args_delta", None, frag, wire_length(data, "delta", frag),
                            None, text(payload["toolCallId"], "toolCallId"))
    if kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"):
        frag = maybe_text(payload.get("delta"), "delta")
        return Ev(kind, "other") if frag is None else fragment_row(
            kind, "text_delta", None, frag, wire_length(data, "delta", frag))
    if kind == "TOOL_CALL_START":
        return Ev(kind, "call_start", None, text(payload["toolCallId"], "toolCallId"),
                  text(payload["toolCallName"], "toolCallName"))
    if kind == "TOOL_CALL_END":
        return Ev(kind, "block_stop", None, text(payload["toolCallId"], "toolCallId"))
    if kind == "TEXT_MESSAGE_START":
        return Ev(kind, "text_start")
    if kind == "RUN_FINISHED":  # (an outcome, when the run was interrupted or succeeded)
        outcome = payload.get("outcome")
        return Ev(kind, "turn_stop",
                  reason=stated(outcome.get("type") if isinstance(outcome, dict) else outcome))
    if kind == "RUN_ERROR":
        return Ev.provider_error(kind, payload.get("message"), payload.get("code"))
    if kind == "TOOL_CALL_RESULT":
        return Ev(kind, "other", call_id=text(payload["toolCallId"], "toolCallId"))
    return Ev(kind, "other")  # runs, steps, state, snapshots, reasoning, RAW, CUSTOM


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as an AG-UI server streams it: ``RUN_STARTED``, each text segment a text
    message (an empty fragment is not sent: the protocol forbids an empty text delta), each
    call announced with its parent message, filled by ``TOOL_CALL_ARGS`` and ended by
    ``TOOL_CALL_END``, then ``RUN_FINISHED``."""
    run = {"threadId": "thread_lab", "runId": "run_lab"}
    frames: list[WireFrame] = []
    add = framer(frames)
    add({"type": "RUN_STARTED", **run}, "head")

    calls, message = 0, "msg_lab0"
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            message = f"msg_lab{n}"
            add({"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
                "text_start", n)
            for piece in filter(None, seg.fragments):
                add({"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": piece},
                    "text", n, piece)
            add({"type": "TEXT_MESSAGE_END", "messageId": message}, "text_stop", n)
            continue
        add({"type": "TOOL_CALL_START", "toolCallId": seg.call_id, "toolCallName": seg.tool,
             "parentMessageId": message}, "call_start", n, block=calls)
        for piece in seg.fragments:
            add({"type": "TOOL_CALL_ARGS", "toolCallId": seg.call_id, "delta": piece},
                "args", n, piece, calls)
        add({"type": "TOOL_CALL_END", "toolCallId": seg.call_id}, "call_stop", n,
            block=calls)
        calls += 1
    add({"type": "RUN_FINISHED", **run}, "end")
    return frames


_STOPS = tuple(sorted(TYPES - _PASSING))  # the events that end a chunked call
FORMAT = WireFormat.of(
    AGUI,
    docs="https://docs.ag-ui.com/concepts/events",
    path="/",
    events={
        "call_start": ("TOOL_CALL_START", "TOOL_CALL_CHUNK"),
        "args_delta": ("TOOL_CALL_ARGS", "TOOL_CALL_CHUNK"),
        "block_stop": _STOPS,
        "text_start": ("TEXT_MESSAGE_START",),
        "text_delta": ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"),
        "turn_stop": ("RUN_FINISHED",),
        "error": ("RUN_ERROR",),
        "other": tuple(sorted(TYPES - {"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
                                       "TOOL_CALL_CHUNK", "TEXT_MESSAGE_START",
                                       "TEXT_MESSAGE_CONTENT", "RUN_FINISHED", "RUN_ERROR"})),
    },
    fields=Fields(call_id=("toolCallId",), tool=("toolCallName",), fragment=("delta",),
                  whole=("arguments",), text=("delta",)),
    envelope=Envelope(
        containers=frozenset(),  # every event is flat: snapshots, state and results are data
        schema=frozenset(("type", "role", "toolCallName")),
        numbers=frozenset(("timestamp",)),
        ids=frozenset(("threadId", "runId", "parentRunId", "messageId", "parentMessageId",
                       "id")),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "invalid_arguments",
                          "line_separator_in_data")),  # in what is said: the writer's as is
)
