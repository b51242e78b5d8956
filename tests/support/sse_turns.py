"""Turns written event by event: each payload a dict (or raw text), framed by the library.

The provider tests, ``calls()`` tests and the fast-path comparisons build their bodies here;
:mod:`tests.turns` builds whole turns from fragments on the same encoder.
"""

from __future__ import annotations

import json
import re

import pytest

import streamcalls_lab as scl
from streamcalls_lab.framing.sse import DONE_DATA, sse_body, sse_frame


def frame(event: str | None, payload: object) -> str:
    """One frame; a ``str`` payload is sent as it is, anything else as ``json.dumps`` writes it."""
    return sse_frame(payload if isinstance(payload, str) else json.dumps(payload), event)


def sse(*events: tuple[str | None, object]) -> bytes:
    """One frame per ``(event name, payload)``."""
    return sse_body(frame(name, p) for name, p in events)


DONE = sse_body([sse_frame(DONE_DATA)])


def anthropic(*events: dict) -> bytes:
    return sse(*((e["type"], e) for e in events))


def chat(*deltas: dict, finish: str | None = None, done: bool = True) -> bytes:
    chunks = [{"object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    if finish:
        chunks.append({"object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return sse(*((None, c) for c in chunks)) + (DONE if done else b"")


def responses(*events: dict) -> bytes:
    return sse(*((e["type"], e) for e in events))


def kinds(body: bytes) -> list[str]:
    """The ``kind`` of each row ``load()`` gives for a body."""
    return list(scl.load(body).kind.astype(str))


def providers(body: bytes) -> set[str]:
    """The providers ``load()`` reads a body's rows as."""
    return set(scl.load(body).provider)


def call_start_at(body: bytes, at: int) -> tuple:
    """(kind, block, call_id, tool) of row ``at`` of a body: what announcing a call sets."""
    row = scl.load(body).iloc[at]
    return (row.kind, row.block, row.call_id, row.tool)


def assert_refused_naming(body: bytes, reason: str) -> None:
    """Strict ``load()`` raises a ``CaptureError`` naming ``reason``; lenient mode keeps the row
    and records ``reason`` as its problem: a field of the wrong type is never coerced."""
    with pytest.raises(scl.CaptureError, match=re.escape(reason)):
        scl.load(body)
    assert reason in scl.load(body, strict=False).problem.dropna().iloc[0]


# -- anthropic-messages ----------------------------------------------------------
START = {"type": "message_start", "message": {"id": "msg_1", "content": []}}
TOOL = {"type": "content_block_start", "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}}


def args_delta(text: str, index: int = 1) -> dict:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": text}}


# -- openai-chat -----------------------------------------------------------------
ANNOUNCE = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                            "function": {"name": "lookup", "arguments": ""}}]}


def arg(text: str, index: int = 0) -> dict:
    return {"tool_calls": [{"index": index, "function": {"arguments": text}}]}


def _choice(k: int, delta: dict, finish: str | None = None) -> dict:
    return {"object": "chat.completion.chunk",
            "choices": [{"index": k, "delta": delta, "finish_reason": finish}]}


def _tool(index: int, args: str, call_id: str | None = None) -> dict:
    call: dict = {"index": index, "function": {"arguments": args}}
    if call_id:
        call.update(id=call_id, type="function")
        call["function"]["name"] = "lookup"
    return {"tool_calls": [call]}


N2 = sse(*((None, c) for c in (
    _choice(0, _tool(0, '{"q":', "call_a")), _choice(1, _tool(0, '{"q":', "call_b")),
    _choice(0, _tool(0, '"a"}')), _choice(1, _tool(0, '"b"}')),
    _choice(0, {}, "tool_calls"),
))) + DONE
"""A Chat response of two choices (``n=2``), each with a call at index 0, interleaved."""

# -- openai-responses ------------------------------------------------------------
ADDED = {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                  "name": "lookup", "arguments": ""}}
