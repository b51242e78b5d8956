"""OpenAI Realtime (WebSocket, WebRTC data channel) server events, saved as JSON lines.

https://platform.openai.com/docs/api-reference/realtime-server-events

A WebSocket carries no framing of its own to save, so a session is kept as JSON lines
(NDJSON), one event a line, in either of two shapes:

- the server event itself, as ``recv()`` gives it (openai-python's
  ``client.realtime.connect()``; the data channel's ``message`` data): every server event
  names itself by ``type`` and carries an ``event_id``;
- the event with its receive time, as ``@openai/realtime-api-beta``'s ``RealtimeClient``
  logs every event (``realtime.event``, what openai-realtime-console shows):
  ``{"time": "<ISO 8601>", "source": "server" | "client", "event": {...}}`` (and
  ``"type": "realtime.event"`` in later releases), or the kit's line for a WebSocket
  message, the event under ``message`` (the proxy's WebSocket capture, the ``.wslog``
  import). A client's events (``source`` ``client``) are other rows.

Recognised by ``event_id`` (or the wrapper), never by ``type`` alone: the Realtime API's
``response.*`` events share their names with the Responses API's SSE events, which carry
no ``event_id``. A call is an output item: ``response.output_item.added`` of a
``function_call`` (``call_id``, ``name``) or an ``mcp_call`` (a remote tool the server
runs; its item ``id`` stands for the call id) announces it, each
``response.function_call_arguments.delta`` (``response.mcp_call_arguments.delta``) ``delta``
is a fragment, ``.done`` repeats the whole ``arguments``, and ``response.output_item.done``
ends it. Calls are keyed by their item's id, a session holding many responses each
counting ``output_index`` from 0, so each call gets a ``block`` in order of first
appearance. Text (``response.output_text.delta``, and the spoken words'
``response.output_audio_transcript.delta``; the beta's ``response.text.delta`` and
``response.audio_transcript.delta``) is text; ``response.done`` ends each response (its
``status``, and ``status_details.reason``); a call item its ``output`` holds that no event
announced (a log that kept only ``response.done``, where the guide reads calls from) is
announced there, its whole ``arguments`` one fragment, and ended; ``error`` is the
server's error.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from ..events import Ev, fragment_row, maybe_text, obj, stated_status, text, ws_message
from ..turns import Role, Script, Text, WireFrame
from ._identity import Identities
from .as_written import wire_length, wire_lengths
from .recognise import ByKeys
from .spec import Envelope, Fields, WireFormat

_ARGS = ("response.function_call_arguments.delta", "response.mcp_call_arguments.delta")
_DONE = ("response.function_call_arguments.done", "response.mcp_call_arguments.done")
_TEXT = ("response.output_text.delta", "response.output_audio_transcript.delta",
         "response.text.delta", "response.audio_transcript.delta")
_CALLS = {"function_call": "call_id", "mcp_call": "id"}  # item type -> the field naming it
CLIENT = frozenset((
    "session.update", "input_audio_buffer.append", "input_audio_buffer.commit",
    "input_audio_buffer.clear", "conversation.item.create", "conversation.item.retrieve",
    "conversation.item.truncate", "conversation.item.delete", "response.create",
    "response.cancel", "output_audio_buffer.clear", "transcription_session.update",
))
"""The events a client sends (a wrapped log keeps them too): other rows."""
SERVER = frozenset((
    "error", "session.created", "session.updated", "transcription_session.created",
    "transcription_session.updated", "conversation.created", "conversation.item.created",
    "conversation.item.added", "conversation.item.done", "conversation.item.retrieved",
    "conversation.item.input_audio_transcription.completed",
    "conversation.item.input_audio_transcription.delta",
    "conversation.item.input_audio_transcription.segment",
    "conversation.item.input_audio_transcription.failed", "conversation.item.truncated",
    "conversation.item.deleted", "input_audio_buffer.committed", "input_audio_buffer.cleared",
    "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
    "input_audio_buffer.timeout_triggered", "input_audio_buffer.dtmf_event_received",
    "output_audio_buffer.started", "output_audio_buffer.stopped",
    "output_audio_buffer.cleared", "response.created", "response.done",
    "response.output_item.added", "response.output_item.done", "response.content_part.added",
    "response.content_part.done", "response.output_text.done", "response.text.done",
    "response.output_audio.delta", "response.output_audio.done", "response.audio.delta",
    "response.audio.done", "response.output_audio_transcript.done",
    "response.audio_transcript.done", "response.mcp_call.in_progress",
    "response.mcp_call.completed", "response.mcp_call.failed", "mcp_list_tools.in_progress",
    "mcp_list_tools.completed", "mcp_list_tools.failed", "rate_limits.updated",
    *_ARGS, *_DONE, *_TEXT,
))
"""Every server event (openai-python's ``RealtimeServerEvent``, GA and beta names)."""
_BARE = ByKeys({"event_id": str}, {"type": str})
_WRAPPED = ByKeys({"event": dict}, {"source": str, "time": None})


def _kit_line(payload: Any) -> bool:
    """The kit's line for a WebSocket message (the proxy's and the ``.wslog`` import's):
    ``{"source", "time", "message"}``, the message a Realtime event (it names its ``type``;
    a Gemini Live message never does)."""
    message = payload.get("message") if isinstance(payload, dict) else None
    return (isinstance(message, dict) and type(message.get("type")) is str
            and type(payload.get("source")) is str)


class OpenAIRealtime:
    name = "openai-realtime"
    hot = None  # calls are keyed by item id: every frame goes through normalize

    def __init__(self) -> None:
        self._blocks: dict[str, int] = {}  # item id -> block, in order of first appearance
        self._calls = 0
        self._who = Identities()  # each call's id and name, by block

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return _BARE(event, payload) or _WRAPPED(event, payload) or _kit_line(payload)

    def _block(self, item: str, new: bool = False) -> int:
        """The block of the call ``item`` names (``new``: a call announced anew)."""
        if new or item not in self._blocks:
            self._blocks[item] = self._calls
            self._calls += 1
        return self._blocks[item]

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload = ws_message(obj(payload, "a Realtime event"))
        inner = "event" if "event" in payload else "message"
        if inner in payload and "source" in payload:  # the wrapped shape, or the kit's line
            source = text(payload["source"], "source")
            payload = obj(payload[inner], inner)
            kind = text(payload["type"], "event.type")
            if source != "server":
                return [Ev(kind, "other")]
        else:
            kind = text(payload["type"], "type")
        if kind in _ARGS:
            item = text(payload["item_id"], "item_id")
            frag = text(payload["delta"], "delta")
            call_id = maybe_text(payload.get("call_id"), "call_id")
            block = self._block(item)
            row = fragment_row(kind, "args_delta", block, frag,
                               wire_length(data, "delta", frag), None, call_id)
            changed = self._who.see(kind, block, call_id, None, block) if call_id else None
            late = self._who.late(kind)
            row = row if late is None else row._replace(quirk=late)
            return [row] if changed is None else [row, changed]
        if kind in _TEXT:
            frag = text(payload["delta"], "delta")
            return [fragment_row(kind, "text_delta", None, frag, wire_length(data, "delta", frag))]
        if kind in _DONE:
            block = self._block(text(payload["item_id"], "item_id"))
            call_id = maybe_text(payload.get("call_id"), "call_id")
            tool = maybe_text(payload.get("name"), "name")
            out = [Ev(kind, "args_done", block, call_id, tool,
                      final=text(payload["arguments"], "arguments"))]
            return self._who.check(out, kind, block, call_id, tool)
        if kind in ("response.output_item.added", "response.output_item.done"):
            return self._item(kind, obj(payload["item"], "item"), data)
        if kind == "response.done":
            why = stated_status(payload.get("response"), ("status_details", "reason"))
            out, changed = self._unseen(kind, payload.get("response"), data)
            return [*out, Ev(kind, "turn_stop", reason=why), *changed]
        if kind == "error":
            err = obj(payload["error"], "error")
            return [Ev.provider_error(kind, err.get("message"), err.get("code"))]
        return [Ev(kind, "other")]

    def _item(self, kind: str, item: dict[str, Any], data: str) -> list[Ev]:
        """An output item added (a call announced, with any arguments it already holds as
        its first fragment; a message's text starting) or done (a call ended)."""
        field = _CALLS.get(item.get("type"))  # type: ignore[arg-type]
        if field is None:
            return [Ev(kind, "text_start" if kind.endswith("added")
                       and item.get("type") == "message" else "other")]
        item_id = text(item["id"], "item.id")
        call_id = maybe_text(item.get(field), f"item.{field}")
        tool = maybe_text(item.get("name"), "item.name")
        args = maybe_text(item.get("arguments"), "item.arguments")
        if kind.endswith("done"):
            block = self._block(item_id)
            return self._who.check([Ev(kind, "block_stop", block, call_id, tool, final=args)],
                                   kind, block, call_id, tool)
        out = [Ev(kind, "call_start", self._block(item_id, new=True), call_id, tool)]
        self._who.announce(self._blocks[item_id], call_id, tool)
        if args:
            out.append(fragment_row(kind, "args_delta", self._blocks[item_id], args,
                                    wire_length(data, "arguments", args)))
        return out


    def _unseen(self, kind: str, response: Any, data: str) -> tuple[list[Ev], list[Ev]]:
        """The call items of a finished response that no event announced, each announced,
        given its whole ``arguments`` as one fragment and ended (every field checked first:
        a problem ends nothing); and a row for each announced call whose id or name the
        response names otherwise."""
        output = response.get("output") if isinstance(response, dict) else None
        if not isinstance(output, list):
            return [], []
        found = []
        for item in output:
            field = _CALLS.get(item.get("type")) if isinstance(item, dict) else None
            if field is None:
                continue
            item_id = text(item["id"], "item.id")
            found.append((item_id, maybe_text(item.get(field), f"item.{field}"),
                          maybe_text(item.get("name"), "item.name"),
                          maybe_text(item.get("arguments"), "item.arguments")))
        changed = [row for item_id, call_id, tool, _ in found if item_id in self._blocks
                   and (row := self._who.see(kind, self._blocks[item_id], call_id, tool,
                                             self._blocks[item_id])) is not None]
        if not any(item_id not in self._blocks for item_id, *_ in found):
            return [], changed
        wires = iter(wire_lengths(data, "arguments"))  # each call item's, in order
        out = []
        for item_id, call_id, tool, args in found:
            wire = next(wires, None) if args is not None else None
            if item_id in self._blocks:
                continue
            block = self._block(item_id, new=True)
            self._who.announce(block, call_id, tool)
            out.append(Ev(kind, "call_start", block, call_id, tool))
            if args:
                out.append(fragment_row(kind, "args_delta", block, args, wire, None, call_id))
            out.append(Ev(kind, "block_stop", block, call_id, tool, final=args))
        return out, changed


def stated_time(data: str) -> float | None:
    """A wrapped line's receive time (``time``: ISO 8601, or seconds since the epoch), in
    seconds since the epoch; None for a bare event, or a time that is neither."""
    if '"time"' not in data:
        return None
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    value = payload.get("time") if _WRAPPED("line", payload) or _kit_line(payload) else None
    if type(value) in (int, float):
        return float(value)
    if type(value) is str:
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as a session logs it, each server event with its receive time
    (``RealtimeClient``'s ``{"time", "source", "event"}``): the session created, one
    response created, each text segment a message item (its text part's
    ``response.output_text.delta`` fragments), each call a ``function_call`` item (announced
    with empty ``arguments``, filled by argument deltas, repeated by ``.done``, ended by the
    item's done), then ``response.done`` holding every item."""
    model = turn.style.model if turn.style else turn.model
    frames: list[WireFrame] = []
    response = {"object": "realtime.response", "id": "resp_lab", "status": "in_progress",
                "output": [], "conversation_id": "conv_lab"}

    def add(event: dict[str, Any], role: Role = "other", n: int | None = None,
            fragment: str | None = None, block: int | None = None) -> None:
        event = {"type": event["type"], "event_id": f"event_lab{len(frames)}",
                 **{k: v for k, v in event.items() if k != "type"}}
        seconds = len(frames) / 100  # a receive time for each event, 10 ms apart
        wrapped = {"time": f"2026-01-01T00:00:{seconds:06.3f}Z", "source": "server",
                   "event": event}
        frames.append(WireFrame(wrapped, None, role, n, fragment, block))

    add({"type": "session.created", "session": {"type": "realtime", "object":
                                                 "realtime.session", "model": model}},
        "head")
    add({"type": "response.created", "response": response})
    output: list[dict[str, Any]] = []
    calls = 0
    for n, seg in enumerate(turn.segments):
        at = {"response_id": response["id"], "output_index": len(output)}
        if isinstance(seg, Text):
            item = {"id": f"item_lab{n}", "object": "realtime.item", "type": "message",
                    "status": "in_progress", "role": "assistant", "content": []}
            add({"type": "response.output_item.added", **at, "item": item}, "text_start", n)
            part = {"item_id": item["id"], **at, "content_index": 0}
            for piece in seg.fragments:
                add({"type": "response.output_text.delta", **part, "delta": piece}, "text", n,
                    piece)
            whole = "".join(seg.fragments)
            add({"type": "response.output_text.done", **part, "text": whole}, "other", n)
            item = {**item, "status": "completed",
                    "content": [{"type": "output_text", "text": whole}]}
            add({"type": "response.output_item.done", **at, "item": item}, "text_stop", n)
            output.append(item)
            continue
        item = {"id": f"item_lab{n}", "object": "realtime.item", "type": "function_call",
                "status": "in_progress", "name": seg.tool, "call_id": seg.call_id,
                "arguments": ""}
        add({"type": "response.output_item.added", **at, "item": item}, "call_start", n,
            block=calls)
        call = {"item_id": item["id"], **at, "call_id": seg.call_id}
        for piece in seg.fragments:
            add({"type": "response.function_call_arguments.delta", **call, "delta": piece},
                "args", n, piece, calls)
        add({"type": "response.function_call_arguments.done", **call, "name": seg.tool,
             "arguments": seg.args}, "call_stop", n, block=calls)
        item = {**item, "status": "completed", "arguments": seg.args}
        add({"type": "response.output_item.done", **at, "item": item}, "call_stop", n,
            block=calls)
        output.append(item)
        calls += 1
    add({"type": "response.done", "response": {**response, "status": "completed",
                                               "output": output}}, "end")
    return frames


FORMAT = WireFormat.of(
    OpenAIRealtime,
    framing="ndjson",
    docs="https://platform.openai.com/docs/api-reference/realtime-server-events",
    path="/v1/realtime",
    events={
        "call_start": ("response.output_item.added", "response.done"),
        "args_delta": (*_ARGS, "response.output_item.added", "response.done"),
        "args_done": _DONE,
        "block_stop": ("response.output_item.done", "response.done"),
        "text_start": ("response.output_item.added",),
        "text_delta": _TEXT,
        "turn_stop": ("response.done",),
        "error": ("error",),
        "other": tuple(sorted(SERVER - {*_ARGS, *_DONE, *_TEXT, "response.done", "error"}
                              | CLIENT)),
    },
    fields=Fields(call_id=("call_id",), tool=("name",), fragment=("delta", "arguments"),
                  whole=("arguments",), text=("delta", "transcript", "text")),
    envelope=Envelope(
        containers=frozenset(("event", "message", "session", "item", "response", "error", "usage",
                              "output", "status_details", "part", "content",
                              "input_token_details", "output_token_details")),
        schema=frozenset(("type", "object", "role", "name", "status", "source", "model")),
        numbers=frozenset(("output_index", "content_index", "audio_start_ms",
                           "audio_end_ms")),
        ids=frozenset(("event_id", "item_id", "response_id", "previous_item_id", "id",
                       "conversation_id")),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "invalid_arguments",
                          "line_separator_in_data")),  # in what is said: the writer's as is
    stated_time=stated_time,
)
