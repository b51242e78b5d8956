"""Amazon Bedrock ConverseStream: content blocks by index, tool input as string fragments.

https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html

The stream is AWS event-stream, not SSE (:mod:`streamcalls_lab.eventstream`): the event name
is the message's ``:event-type`` header and the payload holds only that event's fields
(plus ``p``, random-length padding). The same events as the AWS SDKs hand them over, each an
object whose one member is named by the event (``{"contentBlockDelta": {...}}``), are read
too: that is how a JSON-lines log of a boto3 stream holds them. A text block has no start
event: its first delta is the first sign of it. An exception message arrives as an event
named by its ``:exception-type`` (``throttlingException``, ``modelStreamErrorException``: AWS
names every modelled exception ``…Exception``), with ``{"message": …}`` as payload.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from .. import _deepjson as deepjson
from ..events import Ev, Kind, array, fragment_row, index, maybe_text, obj, stated, text
from ..framing.sse import json_data
from ..turns import (
    Call,
    Script,
    Transform,
    WireFrame,
    shared,
    transformed,
)
from ._written import restated, setter
from .anthropic import FORMAT as ANTHROPIC
from .anthropic import AnthropicMessages
from .anthropic import write as anthropic_write
from .as_written import object_after, wire_length
from .openai_chat import FORMAT as CHAT
from .openai_chat import OpenAIChat
from .recognise import SHARED
from .spec import Answer, Envelope, Fields, WireFormat

_TYPES = frozenset(
    (
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    )
)
_OWN = _TYPES - SHARED  # the events that name this format
_NOT_OWN = frozenset((None, *SHARED))
_FRAGMENTS: dict[str, tuple[Kind, str]] = {  # delta member -> row kind, field of the fragment
    "toolUse": ("args_delta", "input"),  # {"toolUse": {"input": "..."}}
    "text": ("text_delta", "text"),  # {"text": "..."}
}
_EXCEPTIONS = frozenset(  # the exception members of ConverseStreamOutput
    (
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    )
)


class BedrockConverse:
    name = "bedrock-converse"
    hot = None  # the fast path reads SSE captures only, and this is AWS event-stream

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        # ``metadata`` is LangGraph Platform's first event too: it tells nothing alone
        return isinstance(payload, dict) and (
            event in _OWN or event in _EXCEPTIONS or _wrapped(payload) not in _NOT_OWN)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        if event not in _TYPES and event not in _EXCEPTIONS:
            key = _wrapped(payload)
            if key is not None:  # the event as an AWS SDK hands it over, logged as JSON
                return self.normalize(key, obj(payload[key], key), data)
        if event == "contentBlockDelta":
            block = index(payload["contentBlockIndex"], "contentBlockIndex")
            delta = obj(payload["delta"], "delta")
            for member, (kind, key) in _FRAGMENTS.items():
                if member in delta:
                    holder = delta["toolUse"] if member == "toolUse" else delta
                    frag = text(holder[key], key)
                    return [fragment_row(event, kind, block, frag, wire_length(data, key, frag))]
            return [Ev(event, "other", block)]  # reasoning, citations, tool results
        if event == "contentBlockStart":
            block = index(payload["contentBlockIndex"], "contentBlockIndex")
            start = obj(payload["start"], "start")
            if "toolUse" in start:
                use = start["toolUse"]
                call_id, tool = text(use["toolUseId"], "toolUseId"), text(use["name"], "name")
                return [Ev(event, "call_start", block, call_id, tool)]
            return [Ev(event, "other", block)]  # a server tool's result
        if event == "contentBlockStop":
            return [Ev(event, "block_stop", index(payload["contentBlockIndex"],
                                                  "contentBlockIndex"))]
        if event == "messageStop":
            return [Ev(event, "turn_stop", reason=stated(payload.get("stopReason")))]
        if event.endswith("Exception"):
            message = payload.get("message") if isinstance(payload, dict) else payload
            return [Ev.provider_error(event, message, event)]
        return [Ev(event, "other")]  # messageStart, metadata


def _wrapped(payload: Any) -> str | None:
    """The event name of a ConverseStream event in the shape the AWS SDKs give it (boto3's
    ``for event in response["stream"]``): an object whose one member is named by the event,
    ``{"contentBlockDelta": {...}}``, as a JSON-lines log of such a stream holds it."""
    if isinstance(payload, dict) and len(payload) == 1:
        (key, value), = payload.items()
        if (key in _TYPES or key in _EXCEPTIONS) and isinstance(value, dict):
            return key
    return None


class BedrockInvoke:
    """Bedrock ``InvokeModelWithResponseStream``: the model's own events, base64-wrapped.

    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html

    Each event-stream message is a ``chunk`` whose payload is ``{"bytes": "<base64>"}``;
    the bytes are the model family's own streaming JSON. Claude sends Anthropic Messages
    events (read by that format's reader, ``amazon-bedrock-invocationMetrics`` riding on its
    ``message_stop``), OpenAI-compatible families (gpt-oss, DeepSeek) Chat Completions
    chunks, Nova the ConverseStream events each under its own key, and Llama,
    Titan and Mistral text alone (``generation``, ``outputText``, ``outputs[].text``, with
    their stop reason). A chunk of any other family is an ``other`` row whose ``problem``
    says so. Offsets are the outer message's; ``wire_chars`` is measured in the inner JSON.
    """

    name = "bedrock-invoke"
    hot = None  # AWS event-stream, like ConverseStream

    def __init__(self) -> None:
        self._inner: AnthropicMessages | BedrockConverse | OpenAIChat | None = None

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        return event == "chunk" and isinstance(payload, dict) and "bytes" in payload

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        if event.endswith("Exception"):
            message = payload.get("message") if isinstance(payload, dict) else payload
            return [Ev.provider_error(event, message, event)]
        if event != "chunk":
            return [Ev(event, "other")]
        raw = text(obj(payload, "chunk")["bytes"], "chunk.bytes")
        try:
            inner_text = base64.b64decode(raw, validate=True).decode("utf-8")
            inner = deepjson.parse(inner_text)
        except (binascii.Error, UnicodeDecodeError, orjson.JSONDecodeError) as e:
            raise TypeError(f"chunk.bytes should be base64 of UTF-8 JSON: {e}") from None
        inner = obj(inner, "the model's event (chunk.bytes)")
        if self._inner is None:
            if isinstance(inner.get("type"), str):  # Claude: every event names its type
                self._inner = AnthropicMessages()
            elif "choices" in inner:  # OpenAI-compatible families (gpt-oss, DeepSeek, Jamba)
                self._inner = OpenAIChat()
            elif any(k in _TYPES for k in inner):  # Nova
                self._inner = BedrockConverse()
        if isinstance(self._inner, AnthropicMessages):
            return self._inner.normalize(text(inner.get("type"), "type"), inner, inner_text)
        if isinstance(self._inner, OpenAIChat):
            return self._inner.normalize(event, inner, inner_text)
        if isinstance(self._inner, BedrockConverse):
            key = next((k for k in inner if k in _TYPES), None)
            if key is None:
                return [Ev(event, "other")]  # invocation metrics alone
            return self._inner.normalize(key, obj(inner[key], key), inner_text)
        return _text_family(inner, inner_text)


_TEXT_FAMILIES = (  # the key of a text fragment, and of the stop reason that ends the turn
    ("generation", "stop_reason"),  # Meta Llama
    ("outputText", "completionReason"),  # Amazon Titan Text
)
_METRICS = "amazon-bedrock-invocationMetrics"


def _text_family(inner: dict[str, Any], inner_text: str) -> list[Ev]:
    """A chunk of a model family that streams text alone (no tool calls on this API)."""
    out: list[Ev] = []
    for key, stop in _TEXT_FAMILIES:
        if key in inner:
            frag = text(inner[key], key)
            if frag:
                out.append(fragment_row(key, "text_delta", None, frag,
                                     wire_length(inner_text, key, frag)))
            if inner.get(stop) is not None:
                out.append(Ev(key, "turn_stop", reason=stated(inner[stop])))
            return out or [Ev(key, "other")]
    if "outputs" in inner:  # Mistral
        for output in array(inner["outputs"], "outputs"):
            output = obj(output, "outputs[]")
            frag = text(output.get("text", ""), "outputs[].text")
            if frag:
                out.append(fragment_row("outputs", "text_delta", None, frag,
                                     wire_length(inner_text, "text", frag)))
            if output.get("stop_reason") is not None:
                out.append(Ev("outputs", "turn_stop", reason=stated(output["stop_reason"])))
        return out or [Ev("outputs", "other")]
    if set(inner) == {_METRICS}:
        return [Ev(_METRICS, "other")]
    keys = ", ".join(sorted(inner)[:8])
    return [Ev("chunk", "other", problem=f"a Bedrock invoke chunk from a model family this kit "
                                          f"does not read (its keys: {keys}): kept as other")]


def whole(payload: Any, data: str) -> Answer | None:
    """A whole ``Converse`` response (the API that does not stream): its ``toolUse``
    blocks (``input`` the object exactly as written), ``stopReason`` and text; None for
    any other payload."""
    if not (isinstance(payload, dict) and isinstance(payload.get("output"), dict)
            and isinstance(payload["output"].get("message"), dict) and "stopReason" in payload):
        return None
    calls, texts, at = [], [], 0
    for block in array(payload["output"]["message"].get("content") or [], "message.content"):
        block = obj(block, "content[]")
        if "toolUse" in block:
            use = obj(block["toolUse"], "content[].toolUse")
            args, at = object_after(data, "input", use["input"], at, "toolUse.input")
            calls.append({"call_id": text(use["toolUseId"], "toolUse.toolUseId"),
                          "tool": text(use["name"], "toolUse.name"), "args": args})
        elif "text" in block:
            texts.append(text(block["text"], "content[].text"))
    return Answer(tuple(calls), maybe_text(payload["stopReason"], "stopReason"),
                  "".join(texts))


# -- writing a turn ------------------------------------------------------------------------
def write_converse(turn: Script) -> list[WireFrame]:
    """A turn as ConverseStream sends it: each segment a content block (a text block has no
    start event), ``messageStop`` with the stop reason, then ``metadata``."""
    frames = [WireFrame({"role": "assistant"}, "messageStart", "head")]
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Call):
            frames.append(WireFrame({"contentBlockIndex": n, "start": {"toolUse": {
                "toolUseId": seg.call_id, "name": seg.tool}}}, "contentBlockStart",
                "call_start", n, block=n))
        for piece in seg.fragments:
            delta = {"toolUse": {"input": piece}} if isinstance(seg, Call) else {"text": piece}
            frames.append(WireFrame({"contentBlockIndex": n, "delta": delta},
                                    "contentBlockDelta",
                                    "args" if isinstance(seg, Call) else "text", n, piece,
                                    n if isinstance(seg, Call) else None))
        frames.append(WireFrame({"contentBlockIndex": n}, "contentBlockStop",
                                "call_stop" if isinstance(seg, Call) else "text_stop", n,
                                block=n if isinstance(seg, Call) else None))
    frames.append(WireFrame({"stopReason": "tool_use" if turn.calls else "end_turn"},
                            "messageStop", "finish"))
    frames.append(WireFrame({"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                             "metrics": {"latencyMs": 1}}, "metadata", "end"))
    return frames


def write_invoke(turn: Script) -> list[WireFrame]:
    """A turn as InvokeModelWithResponseStream sends Claude's: each Anthropic Messages event
    base64-wrapped in a ``chunk``, the invocation metrics riding on ``message_stop``."""
    inner = transformed(ANTHROPIC.name, anthropic_write(turn), turn)  # its quirks, inside
    frames = []
    for f in inner:
        text = f.text  # as the Messages writer wrote it (an input object verbatim)
        if f.payload.get("type") == "message_stop":
            text = json_data({**f.payload, _METRICS: {"inputTokenCount": 1,
                                                      "outputTokenCount": 1,
                                                      "invocationLatency": 1,
                                                      "firstByteLatency": 1}})
        wrapped = base64.b64encode(text.encode("utf-8")).decode("ascii")
        frames.append(WireFrame({"bytes": wrapped}, "chunk", f.role, f.segment, f.fragment,
                                f.block))
    return frames


# -- the quirks a ConverseStream producer can send ------------------------------------------
_set_fragment = setter("delta", "toolUse", "input")
_set_block = setter("contentBlockIndex")


QUIRKS: dict[str, Transform | None] = {
    "empty_arguments": None,
    # ``stopReason: "end_turn"`` on a message that made calls.
    "stop_reason_mismatch": restated("finish", ("stopReason",), "end_turn"),
    **shared(_set_block, _set_fragment),
}
"""What a ConverseStream producer can send, and how each is written."""
_ENVELOPE = frozenset(("start", "toolUse", "delta", "usage", "metrics", "messageStart",
                       "contentBlockStart", "contentBlockDelta", "contentBlockStop",
                       "messageStop", "metadata"))
_HEADERS = frozenset((":event-type", ":exception-type", ":message-type", ":content-type",
                      ":error-code"))
"""The event-stream headers that are structure (what the framing reads events by)."""
_TOP = frozenset(("role", "stopReason", "contentBlockIndex"))
FORMAT = WireFormat.of(
    BedrockConverse,
    framing="eventstream",
    docs="https://docs.aws.amazon.com/bedrock/latest/APIReference/"
         "API_runtime_ConverseStream.html",
    path="/model/streamcalls-lab/converse-stream",
    events={
        "call_start": ("contentBlockStart",),
        "args_delta": ("contentBlockDelta",),
        "block_stop": ("contentBlockStop",),
        "text_delta": ("contentBlockDelta",),
        "turn_stop": ("messageStop",),
        "error": tuple(sorted(_EXCEPTIONS)),
        "other": ("messageStart", "metadata", "contentBlockStart", "contentBlockDelta"),
    },
    fields=Fields(call_id=("toolUseId",), tool=("name",), fragment=("input",),
                  text=("text",)),
    envelope=Envelope(
        containers=_ENVELOPE,
        schema=frozenset(("role", "name", "stopReason")),
        numbers=frozenset(("contentBlockIndex", "latencyMs", "inputTokens", "outputTokens",
                           "totalTokens", "cacheReadInputTokens", "cacheWriteInputTokens")),
        top=_TOP,
        headers=_HEADERS,
    ),
    write=write_converse,
    quirks=QUIRKS,
    tool_stop=frozenset(("tool_use",)),
    whole=whole,
)
INVOKE = WireFormat.of(
    BedrockInvoke,
    framing="eventstream",
    docs="https://docs.aws.amazon.com/bedrock/latest/APIReference/"
         "API_runtime_InvokeModelWithResponseStream.html",
    path="/model/streamcalls-lab/invoke-with-response-stream",
    events={kind: ("chunk", *names) for kind, names in ANTHROPIC.events.items()},
    # The inner events are Anthropic's (Claude), ConverseStream's (Nova) or Chat's
    # (OpenAI-compatible families): their fields and envelopes together.
    fields=Fields(
        call_id=(*ANTHROPIC.fields.call_id, *FORMAT.fields.call_id, *CHAT.fields.call_id),
        tool=ANTHROPIC.fields.tool,
        fragment=(*ANTHROPIC.fields.fragment, *FORMAT.fields.fragment, *CHAT.fields.fragment),
        whole=(*ANTHROPIC.fields.whole, *CHAT.fields.whole),
        text=(*ANTHROPIC.fields.text, *CHAT.fields.text, "generation", "outputText"),
    ),
    envelope=Envelope(
        containers=(ANTHROPIC.envelope.containers | _ENVELOPE | CHAT.envelope.containers
                    | {_METRICS}),
        schema=(ANTHROPIC.envelope.schema | CHAT.envelope.schema
                | {"stopReason", "stop_reason", "completionReason"}),
        numbers=(ANTHROPIC.envelope.numbers | CHAT.envelope.numbers | FORMAT.envelope.numbers
                 | {"inputTokenCount", "outputTokenCount", "invocationLatency",
                    "firstByteLatency"}),
        ids=CHAT.envelope.ids,
        top=(_TOP | {"completionReason"} | (ANTHROPIC.envelope.top or frozenset())
             | (CHAT.envelope.top or frozenset())),
        wrapped="bytes",
        headers=_HEADERS,
    ),
    write=write_invoke,
    quirks=dict.fromkeys(ANTHROPIC.quirks),  # written inside, by the Messages transforms
    tool_stop=ANTHROPIC.tool_stop,
    server_ids=ANTHROPIC.server_ids,
)
