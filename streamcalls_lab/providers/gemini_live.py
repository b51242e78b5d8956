"""Gemini Live (``BidiGenerateContent`` over a WebSocket): server messages, saved as JSON lines.

https://ai.google.dev/api/live#receive-messages

A WebSocket has no framing to save, so a session is kept as JSON lines (``.ndjson``), one
message a line, in either of two shapes:

- the server message itself (``LiveServerMessage``, what google-genai's
  ``session.receive()`` parses and a raw WebSocket ``recv()`` gives): an object holding one
  of ``setupComplete``, ``serverContent``, ``toolCall``, ``toolCallCancellation``,
  ``goAway``, ``sessionResumptionUpdate`` (with ``usageMetadata`` beside any of them);
- the message with its direction and receive time, as the kit's proxy and the
  ``import`` of a GenAI SDK replay log write it: ``{"source": "server" | "client",
  "time": <seconds>, "message": {...}}``. A client's messages (``setup``,
  ``clientContent``, ``realtimeInput``, ``toolResponse``) are other rows.

Calls arrive whole, never in fragments: ``toolCall.functionCalls[]`` each an ``id``, a
``name`` and ``args`` (an object); each call is announced, given its ``args`` exactly as
written as one fragment, and stopped, in one message. A ``toolCallCancellation`` (``ids``:
the user interrupted, and the server asks the client not to run them) is an ``other`` row
per id, naming the call and its block, ``reason`` ``cancelled``: the call was complete when
cancelled. ``serverContent.modelTurn.parts[].text`` and ``outputTranscription.text`` (the
words of the spoken answer) are text; ``turnComplete`` ends the turn, and ``interrupted``
ends it too (``reason`` says which). Audio, ``generationComplete``, ``setupComplete`` and
the rest are other rows.
"""

from __future__ import annotations

from typing import Any

from ..events import Ev, array, fragment_row, maybe_text, obj, text, ws_message
from ..turns import Script, Text, WireFrame, json_object, raw, raw_json
from .as_written import exact_span, wire_length
from .spec import Envelope, Fields, WireFormat

MESSAGES = ("toolCall", "toolCallCancellation", "serverContent", "setupComplete", "goAway",
            "sessionResumptionUpdate")
"""What a ``LiveServerMessage`` holds (one of them), in the order a row is named by."""
CLIENT = frozenset(("setup", "clientContent", "realtimeInput", "toolResponse"))
"""What a client sends (``LiveClientMessage``): other rows, in a log that kept them."""


def _marked(payload: Any) -> bool:
    return isinstance(payload, dict) and any(type(payload.get(k)) is dict for k in MESSAGES)


def _wrapped(payload: Any) -> bool:
    return (isinstance(payload, dict) and type(payload.get("source")) is str
            and isinstance(payload.get("message"), dict)
            and (_marked(payload["message"]) or any(k in payload["message"] for k in CLIENT)))


class GeminiLive:
    name = "gemini-live"
    hot = None  # NDJSON: the fast path reads SSE only

    def __init__(self) -> None:
        self._calls = 0
        self._blocks: dict[str, int] = {}  # call id -> block

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return _marked(payload) or _wrapped(payload)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        calls, blocks = self._calls, dict(self._blocks)
        try:
            return self._message(payload, data)
        except Exception:
            self._calls, self._blocks = calls, blocks  # a message reported as a problem
            raise

    def _message(self, payload: Any, data: str) -> list[Ev]:
        payload = ws_message(obj(payload, "a Live message"))
        if "message" in payload and "source" in payload:
            source = text(payload["source"], "source")
            payload = obj(payload["message"], "message")
            if source != "server":
                name = next((k for k in CLIENT if k in payload), "client")
                return [Ev(name, "other")]
        name = next((k for k in MESSAGES if k in payload), "message")
        out: list[Ev] = []
        if "toolCall" in payload:
            at = 0
            for fc in array(obj(payload["toolCall"], "toolCall").get("functionCalls") or [],
                            "toolCall.functionCalls"):
                at = self._call(name, obj(fc, "functionCalls[]"), data, at, out)
        if "toolCallCancellation" in payload:
            cancel = obj(payload["toolCallCancellation"], "toolCallCancellation")
            for i in array(cancel.get("ids") or [], "toolCallCancellation.ids"):
                call_id = text(i, "toolCallCancellation.ids[]")
                out.append(Ev(name, "other", self._blocks.get(call_id), call_id,
                              reason="cancelled"))
        if "serverContent" in payload:
            out += self._content(name, obj(payload["serverContent"], "serverContent"), data)
        return out or [Ev(name, "other")]

    def _call(self, name: str, fc: dict[str, Any], data: str, at: int, out: list[Ev]) -> int:
        """A whole call: announced, its ``args`` as written in one fragment, stopped."""
        call_id = maybe_text(fc.get("id"), "functionCalls[].id")
        tool = text(fc.get("name"), "functionCalls[].name")
        block = self._calls
        self._calls += 1
        if call_id is not None:
            self._blocks[call_id] = block
        out.append(Ev(name, "call_start", block, call_id, tool))
        args = fc.get("args")
        if args is not None:
            start, end = exact_span(data, "args", obj(args, "functionCalls[].args"), at,
                                    len(data), "functionCalls[].args")
            frag = data[start:end]
            out.append(fragment_row(name, "args_delta", block, frag, len(frag), None, call_id))
            at = end
        out.append(Ev(name, "block_stop", block, call_id, tool))
        return at

    @staticmethod
    def _content(name: str, content: dict[str, Any], data: str) -> list[Ev]:
        out: list[Ev] = []
        turn = content.get("modelTurn")
        parts = obj(turn, "modelTurn").get("parts") if turn is not None else None
        for part in array(parts or [], "modelTurn.parts"):
            said = obj(part, "parts[]").get("text")
            if said is not None and not obj(part, "parts[]").get("thought"):
                frag = text(said, "parts[].text")
                out.append(fragment_row(name, "text_delta", None, frag,
                                        wire_length(data, "text", frag)))
        spoken = content.get("outputTranscription")
        if spoken is not None and obj(spoken, "outputTranscription").get("text") is not None:
            frag = text(spoken["text"], "outputTranscription.text")
            out.append(fragment_row(name, "text_delta", None, frag,
                                    wire_length(data, "text", frag)))
        for flag in ("interrupted", "turnComplete"):
            if content.get(flag) is True:
                out.append(Ev(name, "turn_stop", reason=flag))
                break
        return out


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as a Live session sends it: ``setupComplete``, a ``serverContent`` message per
    text fragment, a ``toolCall`` message per call (``args`` the object as given), then
    ``turnComplete``."""
    frames = [WireFrame({"setupComplete": {}}, None, "head")]
    calls = 0
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            frames += [WireFrame({"serverContent": {"modelTurn": {"parts": [{"text": piece}]}}},
                                 None, "text", n, piece) for piece in seg.fragments]
            continue
        call: dict[str, Any] = {"id": seg.call_id, "name": seg.tool}
        if seg.args == "":  # a call with no arguments: the message holds no ``args``
            frames.append(WireFrame({"toolCall": {"functionCalls": [call]}}, None,
                                    "call_start", n, "", calls))
            calls += 1
            continue
        args = json_object(seg.args, FORMAT.name)
        payload = {"toolCall": {"functionCalls": [{**call, "args": raw(0)}]}}
        frames.append(WireFrame(payload, None, "call_start", n, args, calls,
                                raw_json(payload, [args])))
        calls += 1
    frames.append(WireFrame({"serverContent": {"turnComplete": True}}, None, "end"))
    return frames


FORMAT = WireFormat.of(
    GeminiLive,
    framing="ndjson",
    docs="https://ai.google.dev/api/live#receive-messages",
    events={
        # a call comes whole in one toolCall message: its start, its arguments and its end
        **dict.fromkeys(("call_start", "args_delta", "block_stop"), ("toolCall",)),
        "text_delta": ("serverContent",),
        "turn_stop": ("serverContent",),
        "other": (*MESSAGES, "message", "client", *sorted(CLIENT)),
    },
    fields=Fields(call_id=("id",), tool=("name",), fragment=("args",), whole=("args",),
                  text=("text",)),
    envelope=Envelope(
        containers=frozenset(("message", "serverContent", "modelTurn", "parts", "toolCall",
                              "functionCalls", "toolCallCancellation", "outputTranscription",
                              "setupComplete", "usageMetadata")),
        schema=frozenset(("name", "source")),
        numbers=frozenset(("promptTokenCount", "responseTokenCount", "totalTokenCount")),
        ids=frozenset(("id", "ids")),
        top=frozenset(("source",)),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "line_separator_in_data")),
    calls_whole=True,
)
