"""OpenAI Responses: output items announced, argument deltas, a ``.done`` with the whole string.

https://platform.openai.com/docs/api-reference/responses-streaming

Three item types are calls whose input streams: ``function_call`` (JSON arguments),
``custom_tool_call`` (a custom tool's free-text ``input``: not JSON, ``calls()`` says so in
``args_format``) and ``mcp_call`` (JSON arguments of a remote MCP tool the server runs; it
has no ``call_id``, so its item ``id`` stands in).
"""

from __future__ import annotations

import json
from operator import methodcaller
from typing import Any

import msgspec

from ..events import (
    HOT,
    INT64,
    Ev,
    Hot,
    HotRows,
    Index,
    Kind,
    array,
    decoded,
    fragment_row,
    index,
    maybe_text,
    obj,
    stated_status,
    text,
)
from ..turns import (
    Role,
    Script,
    Text,
    Transform,
    WireFrame,
    shared,
)
from ._identity import Identities
from ._written import args_in_announcement, setter
from .as_written import escaped_wire_length, wire_length
from .spec import Answer, Envelope, Fields, Flush, Streaming, WireFormat

_TURN_STOPS = frozenset(("response.completed", "response.incomplete", "response.failed"))
_DELTA_KINDS: dict[str, Kind] = {  # read by normalize and by the fast path's _hot_rows
    "response.function_call_arguments.delta": "args_delta",
    "response.custom_tool_call_input.delta": "args_delta",
    "response.mcp_call_arguments.delta": "args_delta",
    "response.output_text.delta": "text_delta",
}
_DONE = {  # a done event -> the field repeating the whole input
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
    "response.mcp_call_arguments.done": "arguments",
}
CALL_ITEMS = {  # item type -> (the field naming the call, the field holding its input)
    "function_call": ("call_id", "arguments"),
    "custom_tool_call": ("call_id", "input"),
    "mcp_call": ("id", "arguments"),
}


class _DeltaEvent(msgspec.Struct, forbid_unknown_fields=True, gc=False, kw_only=True):
    """Any ``response.*.delta`` as a typed struct, for hot_rows: every field declared, so a
    payload that differs in any way is left to normalize(). The fields are in the order
    OpenAI sends them (msgspec looks for the next key where it expects it)."""

    type: str
    sequence_number: Any = None
    item_id: Any = msgspec.UNSET  # not None: a null item_id is a quirk normalize notes
    output_index: Index
    content_index: Any = None
    delta: Any = None
    logprobs: Any = None
    obfuscation: Any = None
    command_index: Any = None
    summary_index: Any = None


def _call_item(item: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    """For an output item that is a call (:data:`CALL_ITEMS`): the field holding its input,
    its id and its tool's name; None for any other item."""
    fields = CALL_ITEMS.get(item.get("type"))  # type: ignore[arg-type]
    if fields is None:
        return None
    id_field, input_field = fields
    return (input_field, maybe_text(item.get(id_field), f"item.{id_field}"),
            maybe_text(item.get("name"), "item.name"))


def _hot_rows(at: list[int], structs: list[_DeltaEvent | None], events: list[str],
              raws: list[bytes], out: list[Any], cols: HotRows) -> None:
    """A ``*.delta`` needs no item state when it carries ``output_index``. Its row goes into
    the columns (no tuple per row)."""
    frame, event, kind, block, fragment, wire, choice = cols.appenders()
    kinds = _DELTA_KINDS.get
    for i, p in decoded(at, structs):
        name = p.type
        if name != events[i] or not name.startswith("response."):
            continue  # (another type, or not the format's: normalize reads it)
        if p.item_id is None or p.item_id == "":
            continue  # a blank item_id: normalize notes it
        k = kinds(name)
        delta = p.delta
        if k is None:
            kind("other")
            fragment(None)
            wire(None)
        elif type(delta) is str:  # (anything else: normalize says what is wrong)
            kind(k)
            fragment(delta)
            wire(len(delta) if raws[i].find(b"\\") < 0
                 else escaped_wire_length(raws[i], "delta", delta))
        else:
            continue
        frame(i)
        event(name)
        block(p.output_index)
        choice(None)
        out[i] = HOT


_HOT = Hot(msgspec.json.Decoder(_DeltaEvent).decode, _hot_rows,
           methodcaller("endswith", ".delta"))  # nearly all of a stream


class OpenAIResponses:
    name = "openai-responses"
    hot = _HOT

    def __init__(self) -> None:
        self._items: dict[str, int] = {}  # item id -> output_index, for events naming only the id
        self._who = Identities()  # each call's id and name, by output_index

    @staticmethod
    def sniff(event: str, payload: Any) -> bool:
        # (an event_id makes it a Realtime server event, of the same names: openai_realtime)
        return (isinstance(payload, dict) and "event_id" not in payload
                and str(payload.get("type", event)).startswith("response."))

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event)
        block = payload.get("output_index")
        if block is None:
            block = self._items.get(payload.get("item_id"))  # type: ignore[arg-type]
        else:
            if type(block) is not int or block not in INT64:  # inline: the hot path
                index(block, "output_index")
        row_kind = _DELTA_KINDS.get(kind)
        if row_kind is not None:
            frag = text(payload["delta"], "delta")
            row = fragment_row(kind, row_kind, block, frag, wire_length(data, "delta", frag))
            if "item_id" in payload and not payload["item_id"]:
                row = row._replace(quirk="blank_identity: item_id "
                                   f"{'null' if payload['item_id'] is None else chr(34) * 2} "
                                   "on a delta")
            return [row]
        field = _DONE.get(kind)
        if field is not None:
            tool = maybe_text(payload.get("name"), "name")
            out = [Ev(kind, "args_done", block, tool=tool, final=text(payload[field], field))]
            return self._who.check(out, kind, block, None, tool)
        if kind == "response.output_item.added":
            item = payload["item"]
            if isinstance(item.get("id"), str) and block is not None:
                self._items[item["id"]] = block
            call = _call_item(item)
            if call is not None:
                input_field, call_id, tool = call
                blank = [f for f, v in (("call_id", call_id), ("name", tool))
                         if v is not None and not v]
                self._who.announce(block, call_id, tool)
                out = [Ev(kind, "call_start", block, call_id, tool, quirk=(
                    f"blank_identity: {' and '.join(blank)} empty on the announcement"
                    if blank else None))]
                if item.get(input_field):
                    frag = text(item[input_field], f"item.{input_field}")
                    out.append(Ev(kind, "args_delta", block, fragment=frag,
                                  wire_chars=wire_length(data, input_field, frag),
                                  quirk="args_in_announcement: argument text in "
                                  "output_item.added"))
                return out
            if item.get("type") == "message":
                return [Ev(kind, "text_start", block)]
            return [Ev(kind, "other", block)]
        if kind == "response.output_item.done":
            item = payload["item"]
            call = _call_item(item)
            if call is not None:
                input_field, call_id, tool = call
                final = maybe_text(item.get(input_field), f"item.{input_field}")
                out = [Ev(kind, "block_stop", block, call_id, tool, final=final)]
                return self._who.check(out, kind, block, call_id, tool)
            return [Ev(kind, "block_stop", block)]
        if kind in _TURN_STOPS:
            why = stated_status(payload.get("response"), ("incomplete_details", "reason"))
            return [Ev(kind, "turn_stop", reason=why)]
        if kind == "error" or kind == "response.error":
            # Documented flat ({"message": …}); servers also nest it ({"error": {…}}).
            err = payload["error"] if isinstance(payload.get("error"), dict) else payload
            return [Ev.provider_error(kind, err.get("message"))]
        return [Ev(kind, "other", block)]


def _whole_terms(reason: str) -> str:
    """A streamed turn's reason (``status: why``, from :func:`_status`) as :func:`whole`
    states it: the why where there is one, else the status."""
    return reason.partition(": ")[2] or reason


def whole(payload: Any, data: str) -> Answer | None:
    """A whole Responses ``response`` (a request without ``"stream": true``, or the one
    ``response.completed`` carries): its call items (:data:`CALL_ITEMS`, their input as
    sent), why it stopped (``incomplete_details.reason``, else ``status``) and its output
    text; None for any other payload."""
    if not (isinstance(payload, dict) and payload.get("object") == "response"
            and isinstance(payload.get("output"), list)):
        return None
    calls, texts = [], []
    for item in payload["output"]:
        item = obj(item, "output[]")
        call = _call_item(item)
        if call is not None:
            input_field, call_id, tool = call
            calls.append({"call_id": call_id, "tool": tool,
                          "args": text(item.get(input_field, ""), f"output[].{input_field}")})
        elif item.get("type") == "message":
            for part in array(item.get("content") or [], "output[].content"):
                part = obj(part, "content[]")
                if part.get("type") == "output_text":
                    texts.append(text(part["text"], "content[].text"))
    details = obj(payload.get("incomplete_details") or {}, "incomplete_details")
    stop = (maybe_text(details.get("reason"), "incomplete_details.reason")
            or maybe_text(payload.get("status"), "status"))
    return Answer(tuple(calls), stop, "".join(texts))


# -- writing a turn ------------------------------------------------------------------------
_HEX = "0123456789abcdef"


def _schema(args: str) -> dict[str, Any]:
    """A plausible parameters schema for the tool list, inferred from one call's arguments."""
    try:
        value = json.loads(args)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return {"type": "object", "properties": {}}
    names = {bool: "boolean", int: "integer", float: "number", str: "string",
             list: "array", dict: "object", type(None): "null"}
    props = {k: {"type": names[type(v)]} for k, v in value.items()}
    return {"type": "object", "properties": props, "required": list(value),
            "additionalProperties": False}


def write(turn: Script) -> list[WireFrame]:
    """A turn as the Responses API streams it: each segment an output item (a message with
    one text part, or a ``function_call``), announced, filled, done; ``sequence_number``
    running on; ``response.completed`` holding every item.

    Events write ``type`` first, then the other keys sorted, as current streams do. With a
    :class:`~.turns.Style` it looks recorded: ids sharing a hex stem, the full response
    object, ``obfuscation`` padding that tops each delta up to a multiple of 16 code points.
    """
    style = turn.style
    frames: list[WireFrame] = []
    seq = 0
    stem = style.ident(18, _HEX) if style else ""

    def item_id(prefix: str, dt: int, n: int) -> str:
        if style is None:
            return f"{prefix}_lab{n}"
        return f"{prefix}_{stem}{style.created + dt:08x}{style.ident(24, _HEX)}"

    def event(payload: dict[str, Any], role: Role = "other", segment: int | None = None,
              fragment: str | None = None, block: int | None = None) -> None:
        nonlocal seq
        rest = sorted({**payload, "sequence_number": seq}.items())
        payload = {"type": payload["type"], **{k: v for k, v in rest if k != "type"}}
        seq += 1
        frames.append(WireFrame(payload, payload["type"], role, segment, fragment, block))

    def padded(delta: str) -> dict[str, str]:
        return {"obfuscation": style.ident(-len(delta) % 16)} if style else {}

    response: dict[str, Any] = {"id": item_id("resp", 0, 0), "object": "response",
                                "created_at": style.created if style else 0,
                                "status": "in_progress"}
    if style is not None:
        tools: dict[str, dict[str, Any]] = {}
        for call in turn.calls:
            tools.setdefault(call.tool, {"type": "function", "description": None,
                                         "name": call.tool, "parameters": _schema(call.args),
                                         "strict": False})
        response |= {
            "background": False, "completed_at": None, "error": None,
            "frequency_penalty": 0.0, "incomplete_details": None, "instructions": None,
            "max_output_tokens": None, "max_tool_calls": None, "model": style.model,
            "output": [], "parallel_tool_calls": True, "presence_penalty": 0.0,
            "previous_response_id": None, "prompt_cache_key": None,
            "prompt_cache_retention": None, "reasoning": {"effort": None, "summary": None},
            "safety_identifier": None, "service_tier": "auto", "store": True,
            "temperature": 1.0, "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto", "tools": list(tools.values()), "top_logprobs": 0,
            "top_p": 1.0, "truncation": "disabled", "usage": None, "user": None,
            "metadata": {},
        }
    else:
        response |= {"model": turn.model, "output": []}
    event({"type": "response.created", "response": response}, "head")
    if style is not None:  # what a recorded stream adds; no client needs it
        event({"type": "response.in_progress", "response": response})
    output: list[dict[str, Any]] = []
    for n, seg in enumerate(turn.segments):
        index = len(output)
        if isinstance(seg, Text):
            mid = item_id("msg", 1, index)
            whole = "".join(seg.fragments)
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            event({"type": "response.output_item.added", "item": {
                "id": mid, "type": "message", "status": "in_progress", "content": [],
                "role": "assistant"}, "output_index": index}, "text_start", n)
            event({"type": "response.content_part.added", "content_index": 0, "item_id": mid,
                   "output_index": index, "part": part}, "other", n)
            for piece in seg.fragments:
                event({"type": "response.output_text.delta", "content_index": 0,
                       "delta": piece, "item_id": mid, "logprobs": [], **padded(piece),
                       "output_index": index}, "text", n, piece)
            done = {**part, "text": whole}
            if style is not None:
                event({"type": "response.output_text.done", "content_index": 0,
                       "item_id": mid, "logprobs": [], "output_index": index, "text": whole},
                      "other", n)
                event({"type": "response.content_part.done", "content_index": 0,
                       "item_id": mid, "output_index": index, "part": done}, "other", n)
            item = {"id": mid, "type": "message", "status": "completed", "content": [done],
                    "role": "assistant"}
            event({"type": "response.output_item.done", "item": item, "output_index": index},
                  "text_stop", n)
            output.append(item)
            continue
        fid = item_id("fc", 1, len(output))
        item = {"id": fid, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": seg.call_id, "name": seg.tool}
        event({"type": "response.output_item.added", "item": item, "output_index": index},
              "call_start", n, block=index)
        for piece in seg.fragments:
            event({"type": "response.function_call_arguments.delta", "delta": piece,
                   "item_id": fid, **padded(piece), "output_index": index},
                  "args", n, piece, index)
        event({"type": "response.function_call_arguments.done", "arguments": seg.args,
               "item_id": fid, "output_index": index}, "call_stop", n, block=index)
        item = {**item, "status": "completed", "arguments": seg.args}
        event({"type": "response.output_item.done", "item": item, "output_index": index},
              "call_stop", n, block=index)
        output.append(item)
    completed = {**response, "status": "completed", "output": output}
    if style is not None:
        out = style.output_tokens
        completed |= {"completed_at": style.created + 1, "service_tier": "default",
                      "usage": {"input_tokens": style.input_tokens,
                                "input_tokens_details": {"cached_tokens": 0},
                                "output_tokens": out,
                                "output_tokens_details": {"reasoning_tokens": 0},
                                "total_tokens": style.input_tokens + out}}
    event({"type": "response.completed", "response": completed}, "end")
    return frames


# -- the quirks a Responses producer can send, each written into a turn's frames -----------
_set_fragment = setter("delta")
_set_block = setter("output_index")


def _blank_identity(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """Argument deltas with an empty ``item_id`` (a Chat-to-Responses bridge:
    litellm#20711)."""
    for f in frames:
        if f.role == "args":
            f.payload["item_id"] = ""
    return frames


def _put_item_arguments(head: WireFrame, fragment: str) -> None:
    head.payload["item"] = {**head.payload["item"], "arguments": fragment}


# Each call's first fragment sent as the item's ``arguments`` in ``output_item.added``.
_args_in_announcement = args_in_announcement(_put_item_arguments)


def _args_only_in_done(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """No argument deltas at all: the text only in ``.done`` and ``output_item.done``
    (litellm#27144: gpt-5.3-codex-spark; LM Studio's open-responses)."""
    return [f for f in frames if f.role != "args"]


def _identity_changed(frames: list[WireFrame], turn: Script) -> list[WireFrame]:
    """The first call's ``output_item.done`` names another ``call_id`` than its
    ``output_item.added`` did (a gateway that mints ids per event)."""
    for f in frames:
        item = f.payload.get("item") if isinstance(f.payload, dict) else None
        if f.role == "call_stop" and isinstance(item, dict) and item.get("call_id"):
            f.payload["item"] = {**item, "call_id": item["call_id"] + "_re"}
            break
    return frames


QUIRKS: dict[str, Transform | None] = {
    "blank_identity": _blank_identity,
    "identity_changed": _identity_changed,
    "args_in_announcement": _args_in_announcement,
    "empty_arguments": None,
    "args_only_in_done": _args_only_in_done,
    **shared(_set_block, _set_fragment),
}
"""What a Responses producer can send, and how each is written (None: only the content)."""


FORMAT = WireFormat.of(
    OpenAIResponses,
    docs="https://platform.openai.com/docs/api-reference/responses-streaming",
    interleaves=True,
    path="/v1/responses",
    events={
        "call_start": ("response.output_item.added",),
        "args_delta": ("response.function_call_arguments.delta",
                       "response.custom_tool_call_input.delta",
                       "response.mcp_call_arguments.delta", "response.output_item.added"),
        "args_done": tuple(_DONE),
        "block_stop": ("response.output_item.done",),
        "text_start": ("response.output_item.added",),
        "text_delta": ("response.output_text.delta",),
        "turn_stop": tuple(sorted(_TURN_STOPS)),
        "error": ("error", "response.error"),
        "other": ("response.created", "response.in_progress", "response.content_part.added",
                  "response.content_part.done", "response.output_text.done",
                  "response.output_item.added"),
    },
    fields=Fields(call_id=("call_id", "id"), tool=("name",), fragment=("delta",),
                  whole=("arguments", "input"), text=("delta", "text")),
    envelope=Envelope(
        containers=frozenset(("response", "item", "output", "part", "usage", "error",
                              "input_tokens_details", "output_tokens_details", "reasoning",
                              "text", "format", "incomplete_details", "content")),
        schema=frozenset(("type", "object", "role", "name", "model", "status", "service_tier",
                          "tool_choice", "truncation", "effort", "verbosity")),
        numbers=frozenset(("output_index", "content_index", "summary_index",
                           "sequence_number", "annotation_index", "created_at", "input_tokens",
                           "output_tokens", "total_tokens", "cached_tokens", "reasoning_tokens",
                           "max_output_tokens")),
        ids=frozenset(("id", "item_id", "response_id", "previous_response_id")),
        # ``name``: function_call_arguments.done names its call's tool at the top level
        top=frozenset(("type", "sequence_number", "output_index", "content_index",
                       "summary_index", "annotation_index", "name")),
    ),
    write=write,
    quirks=QUIRKS,
    server_ids=("mcp_",),
    whole=whole,
    streaming=Streaming("stream", only=("stream_options",)),
    stop_terms=_whole_terms,
    flush=Flush("gpt-4o-2024-08-06", brace_split=True),
)
