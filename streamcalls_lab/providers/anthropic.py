"""Anthropic Messages: content blocks announced, filled by deltas, closed by a stop.

https://docs.anthropic.com/en/api/messages-streaming

Server tools (``server_tool_use``: web search, web fetch, code execution) and MCP tools
(``mcp_tool_use``) are calls like ``tool_use``; their result blocks (``*_tool_result``) are
``other`` rows whose ``call_id`` is the ``tool_use_id`` they answer. A call's input given
whole in its start (a server tool called from code execution) is one fragment, the object
as sent. Fine-grained tool streaming sends the same events, but its arguments may not be
valid JSON: that is ``valid_json`` False in ``calls()``, never a load error.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from ..events import (
    HOT,
    INT64,
    Ev,
    Hot,
    HotRows,
    Index,
    Kind,
    decoded,
    fragment_row,
    index,
    maybe_text,
    obj,
    stated,
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
from ._written import args_announced, restated, setter
from .as_written import escaped_wire_length, object_after, object_text, wire_length
from .recognise import ByType
from .spec import Answer, Envelope, Fields, Flush, Streaming, WireFormat, block_events

_TYPES = frozenset(
    (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    )
)
_CALL_BLOCKS = frozenset(("tool_use", "server_tool_use", "mcp_tool_use"))
_FRAGMENTS: dict[str, tuple[Kind, str]] = {  # delta type -> row kind, field of the fragment
    "input_json_delta": ("args_delta", "partial_json"),
    "text_delta": ("text_delta", "text"),
}  # normalize and the typed structs below (for the fast path) both read this table


# A content_block_delta as a typed struct, for hot_rows: every field declared, so a payload
# that differs in any way is left to normalize(). Each delta type names its kind and key.
class _Delta(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, gc=False):
    kind: ClassVar[Kind] = "other"
    key: ClassVar[str] = ""
    fragment: ClassVar[str | None] = None


class _JsonDelta(_Delta, tag="input_json_delta"):
    kind, key = _FRAGMENTS["input_json_delta"]
    fragment: str = msgspec.field(name="partial_json")  # type: ignore[misc]


class _TextDelta(_Delta, tag="text_delta"):
    kind, key = _FRAGMENTS["text_delta"]
    fragment: str = msgspec.field(name="text")  # type: ignore[misc]


class _ThinkingDelta(_Delta, tag="thinking_delta"):
    thinking: Any = None


class _SignatureDelta(_Delta, tag="signature_delta"):
    signature: Any = None


class _CitationsDelta(_Delta, tag="citations_delta"):
    citation: Any = None


class _Event(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, gc=False):
    pass


class _DeltaEvent(_Event, tag="content_block_delta"):
    index: Index
    delta: _JsonDelta | _TextDelta | _ThinkingDelta | _SignatureDelta | _CitationsDelta


class _BlockStop(_Event, tag="content_block_stop"):  # a block's end: no state either
    index: Index


class _MessageStop(_Event, tag="message_stop"):
    index: ClassVar[None] = None  # (no block: read alike with the others in _hot_rows)


def _hot_rows(at: list[int], structs: list[_Event | None], events: list[str],
              raws: list[bytes], out: list[Any], cols: HotRows) -> None:
    """Every decoded frame is one row, written into the columns (no tuple per row); the
    escaped length is read only when the data line holds a backslash (as_written)."""
    frame, event, kind, block, fragment, wire, choice = cols.appenders()
    for i, p in decoded(at, structs):
        if type(p) is _DeltaEvent:
            d = p.delta  # its kind and key come from _FRAGMENTS, as in normalize
            frag = d.fragment
            event("content_block_delta")
            kind(d.kind)
            fragment(frag)
            wire(None if frag is None else len(frag) if raws[i].find(b"\\") < 0
                 else escaped_wire_length(raws[i], d.key, frag))
        elif type(p) is _BlockStop:
            event("content_block_stop")
            kind("block_stop")
            fragment(None)
            wire(None)
        else:
            event("message_stop")
            kind("turn_stop")
            fragment(None)
            wire(None)
        frame(i)
        block(p.index)
        choice(None)
        out[i] = HOT


_HOT = Hot(msgspec.json.Decoder(_DeltaEvent | _BlockStop | _MessageStop).decode, _hot_rows,
           frozenset(("content_block_delta", "content_block_stop", "message_stop")).__contains__)
# (all but a handful of a stream's frames; normalize reads the payload's type, as these do)


def _whole_input(data: str, given: dict[str, Any], block: int) -> Ev:
    """A call's input given whole in its start: one fragment, the object exactly as sent."""
    frag = object_text(data, "input", given, data.find('"content_block"'), len(data),
                       "content_block.input")
    return fragment_row("content_block_start", "args_delta", block, frag, len(frag))


class AnthropicMessages:
    name = "anthropic-messages"
    hot = _HOT
    sniff = ByType(_TYPES)

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        kind = payload.get("type", event) if isinstance(payload, dict) else event
        if kind == "content_block_delta":
            block = payload["index"]
            if type(block) is not int or block not in INT64:  # inline: the hot path
                index(block, "index")
            delta = payload["delta"]
            row_kind, key = _FRAGMENTS.get(delta.get("type"), ("other", ""))
            if not key:
                return [Ev(kind, "other", block)]  # thinking, signature, citations
            frag = text(delta[key], key)
            return [fragment_row(kind, row_kind, block, frag, wire_length(data, key, frag))]
        if kind == "content_block_start":
            block = index(payload["index"], "index")
            cb = payload["content_block"]
            if cb.get("type") in _CALL_BLOCKS:
                call_id, tool = text(cb["id"], "id"), text(cb["name"], "name")
                blank = [f for f, v in (("id", call_id), ("name", tool)) if not v]
                out = [Ev(kind, "call_start", block, call_id, tool, quirk=(
                    f"blank_identity: {' and '.join(blank)} empty on the announcement"
                    if blank else None))]
                given = cb.get("input")
                if given:  # sent whole in the start (a server tool called from code)
                    row = _whole_input(data, given, block)
                    if cb.get("type") == "tool_use" and "caller" not in cb:
                        # documented only for server tools and calls made from code
                        row = row._replace(quirk="args_in_announcement: a client tool's "
                                           "input sent whole in content_block_start")
                    out.append(row)
                return out
            if cb.get("type") == "text":
                return [Ev(kind, "text_start", block)]
            # A server or MCP tool's result block names the call it answers.
            return [Ev(kind, "other", block, maybe_text(cb.get("tool_use_id"), "tool_use_id"))]
        if kind == "content_block_stop":
            return [Ev(kind, "block_stop", index(payload["index"], "index"))]
        if kind == "message_stop":
            return [Ev(kind, "turn_stop")]
        if kind == "message_delta":  # the message's stop reason (tool_use, end_turn, ...)
            delta = payload.get("delta")
            stop = delta.get("stop_reason") if isinstance(delta, dict) else None
            return [Ev(kind, "other", reason=stated(stop))]
        if kind == "error":
            err = payload.get("error") or {}
            return [Ev.provider_error(kind, err.get("message"), str(err.get("type")))]
        return [Ev(kind, "other")]


def whole(payload: Any, data: str) -> Answer | None:
    """A whole Messages response (a request without ``"stream": true``): its calls (the
    ``tool_use``, server and MCP tool blocks, ``input`` the object exactly as written), its
    ``stop_reason`` and its text; None for any other payload."""
    if not (isinstance(payload, dict) and payload.get("type") == "message"
            and isinstance(payload.get("content"), list)):
        return None
    calls, texts, at = [], [], 0
    for block in payload["content"]:
        block = obj(block, "content[]")
        if block.get("type") in _CALL_BLOCKS:
            args, at = object_after(data, "input", block["input"], at, "content[].input")
            calls.append({"call_id": text(block["id"], "content[].id"),
                          "tool": text(block["name"], "content[].name"), "args": args})
        elif block.get("type") == "text":
            texts.append(text(block["text"], "content[].text"))
    return Answer(tuple(calls), maybe_text(payload.get("stop_reason"), "stop_reason"),
                  "".join(texts))


# -- writing a turn ------------------------------------------------------------------------
PING = WireFrame({"type": "ping"}, "ping", data='{"type": "ping"}')
"""The keep-alive event the Messages API sends (written as it sends it)."""


def write(turn: Script) -> list[WireFrame]:
    """A turn as the Messages API streams it: each segment a content block, announced,
    filled by deltas and stopped, then ``message_delta`` and ``message_stop``.

    With a :class:`~.turns.Style` it looks recorded (measured on real captures): most data
    lines padded with 0-15 spaces before the closing brace, a ``ping`` right after the first
    block opens, every ``tool_use`` block opening with an empty ``partial_json``.
    """
    style = turn.style
    frames: list[WireFrame] = []

    def frame(payload: dict[str, Any], role: Role = "other", segment: int | None = None,
              fragment: str | None = None, block: int | None = None) -> None:
        pad = style.rng.randrange(16) if style is not None else 0
        frames.append(WireFrame(payload, payload["type"], role, segment, fragment, block,
                                pad=pad))

    usage = ({"input_tokens": style.input_tokens, "cache_creation_input_tokens": 0,
              "cache_read_input_tokens": 0} if style else {"input_tokens": 1})
    message_id = "msg_01" + style.ident(22) if style else "msg_lab"
    frame({"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant",
        "model": style.model if style else turn.model, "content": [], "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                              "ephemeral_1h_input_tokens": 0},
                  "output_tokens": 1, "service_tier": "standard"} if style else
        {**usage, "output_tokens": 1}}}, "head")
    pinged = style is None  # a recorded stream pings once, after the first block opens
    for n, seg in enumerate(turn.segments):
        block = n  # every segment is a content block
        if isinstance(seg, Text):
            frame({"type": "content_block_start", "index": block,
                   "content_block": {"type": "text", "text": ""}}, "text_start", n)
        else:
            frame({"type": "content_block_start", "index": block, "content_block": {
                "type": "tool_use", "id": seg.call_id, "name": seg.tool, "input": {}}},
                "call_start", n, block=block)
        if not pinged:
            frames.append(PING)
            pinged = True
        if isinstance(seg, Text):
            for piece in seg.fragments:
                frame({"type": "content_block_delta", "index": block,
                       "delta": {"type": "text_delta", "text": piece}}, "text", n, piece)
        else:
            if style is not None:
                frame({"type": "content_block_delta", "index": block,
                       "delta": {"type": "input_json_delta", "partial_json": ""}}, "other", n,
                      block=block)
            for piece in seg.fragments:
                frame({"type": "content_block_delta", "index": block,
                       "delta": {"type": "input_json_delta", "partial_json": piece}},
                      "args", n, piece, block)
        frame({"type": "content_block_stop", "index": block},
              "text_stop" if isinstance(seg, Text) else "call_stop", n,
              block=None if isinstance(seg, Text) else block)
    delta = {"stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None}
    frame({"type": "message_delta", "delta": delta,
           "usage": {**usage, "output_tokens": style.output_tokens} if style else
           {"output_tokens": 1}}, "finish")
    frame({"type": "message_stop"}, "end")
    return frames


# -- the quirks a Messages producer can send, each written into a turn's frames ------------
_set_fragment = setter("delta", "partial_json")
_set_block = setter("index")


QUIRKS: dict[str, Transform | None] = {
    # Gemini through a gateway, pydantic-ai#2302 (the shape of a server tool called from
    # code): each call's input whole in content_block_start, no deltas, the empty first one
    # included
    "args_in_announcement": args_announced(AnthropicMessages.name,
                                           ("content_block", "input"), ("args", "other")),
    "empty_arguments": None,
    # ``stop_reason: "end_turn"`` on a message that made client calls.
    "stop_reason_mismatch": restated("finish", ("delta", "stop_reason"), "end_turn"),
    **shared(_set_block, _set_fragment),
}
"""What a Messages producer can send, and how each is written (None: only the content)."""


FORMAT = WireFormat.of(
    AnthropicMessages,
    docs="https://docs.anthropic.com/en/api/messages-streaming",
    path="/v1/messages",
    events=block_events("content_block_start", "content_block_delta", "content_block_stop",
                        turn_stop=("message_stop",),
                        other=("message_start", "message_delta", "ping")),
    fields=Fields(call_id=("id", "tool_use_id"), tool=("name",), fragment=("partial_json",),
                  whole=("input",), text=("text",)),
    envelope=Envelope(
        containers=frozenset(("message", "content_block", "delta", "usage", "error", "content",
                              "cache_creation", "server_tool_use")),
        schema=frozenset(("type", "role", "name", "model", "stop_reason", "service_tier",
                          "inference_geo")),
        numbers=frozenset(("index", "input_tokens", "output_tokens",
                           "cache_creation_input_tokens", "cache_read_input_tokens",
                           "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens",
                           "web_search_requests", "web_fetch_requests")),
        top=frozenset(("type", "index")),
    ),
    write=write,
    quirks=QUIRKS,
    keepalive=PING,
    whole=whole,
    streaming=Streaming("stream"),
    call_ids=("toolu_01", 22),
    tool_stop=frozenset(("tool_use",)),
    server_ids=("srvtoolu_", "mcptoolu_"),
    flush=Flush("claude-sonnet-4-20250514", args="measured", text="measured"),
)
