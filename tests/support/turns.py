"""Small hand-built SSE turns for the stats, plots, display and browser tests.

Each builder writes the provider's real framing through the library's encoder, so the
loader reads them like a capture; the arguments are whatever fragments the test passes.
The knobs real streams rarely show (a re-used index, calls never stopped, a done event
that disagrees with the fragments) live here, not in the library.
"""

from __future__ import annotations

from collections.abc import Sequence

from streamcalls_lab.framing.sse import sse_body

from .sse_turns import DONE
from .sse_turns import frame as _frame


def anthropic(
    text: Sequence[str] = (),
    calls: Sequence[tuple[str, Sequence[str]]] = (),
    stop_calls: bool = True,
    indexes: Sequence[int] | None = None,
) -> bytes:
    """An Anthropic Messages turn: a text block, then one tool_use block per call.

    ``indexes`` overrides each call's block index (to re-use one); ``stop_calls=False``
    leaves every call without its content_block_stop.
    """
    out = [_frame("message_start", {"type": "message_start", "message": {"id": "msg_t"}})]
    if text:
        out.append(_frame("content_block_start", {
            "type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}))
        for part in text:
            out.append(_frame("content_block_delta", {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": part}}))
        out.append(_frame("content_block_stop", {"type": "content_block_stop", "index": 0}))
    for n, (tool, parts) in enumerate(calls):
        index = indexes[n] if indexes is not None else n + (1 if text else 0)
        out.append(_frame("content_block_start", {
            "type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": f"toolu_{n}", "name": tool,
                              "input": {}}}))
        for part in parts:
            out.append(_frame("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part}}))
        if stop_calls:
            out.append(_frame("content_block_stop",
                              {"type": "content_block_stop", "index": index}))
    if stop_calls:
        out.append(_frame("message_delta", {"type": "message_delta",
                                            "delta": {"stop_reason": "tool_use"}}))
        out.append(_frame("message_stop", {"type": "message_stop"}))
    return sse_body(out)


def chat(calls: Sequence[tuple[int, str | None, str | None, Sequence[str]]]) -> bytes:
    """An OpenAI Chat turn; each call is ``(index, id, name, fragments)``.

    An ``id`` of None sends the call's fragments with no announcement of their own, as the
    servers that merge parallel calls do.
    """
    out = []
    for index, cid, name, parts in calls:
        if cid is not None:
            out.append(_chunk({"index": index, "id": cid, "type": "function",
                               "function": {"name": name, "arguments": ""}}))
        for part in parts:
            out.append(_chunk({"index": index, "function": {"arguments": part}}))
    out.append(_frame(None, {"object": "chat.completion.chunk",
                             "choices": [{"index": 0, "delta": {},
                                          "finish_reason": "tool_calls"}]}))
    return sse_body(out) + DONE


def _chunk(call: dict[str, object]) -> str:
    return _frame(None, {"object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": {"tool_calls": [call]},
                                      "finish_reason": None}]})


def responses(parts: Sequence[str], final: str | None = None, name: str = "lookup") -> bytes:
    """An OpenAI Responses turn with one call; ``final`` is what the done event repeats."""
    whole = "".join(parts) if final is None else final
    out = [
        _frame("response.created", {"type": "response.created", "response": {"id": "r"}}),
        _frame("response.output_item.added", {
            "type": "response.output_item.added", "output_index": 0,
            "item": {"type": "function_call", "call_id": "call_r", "name": name,
                     "arguments": ""}}),
    ]
    for part in parts:
        out.append(_frame("response.function_call_arguments.delta", {
            "type": "response.function_call_arguments.delta", "output_index": 0,
            "delta": part}))
    out.append(_frame("response.function_call_arguments.done", {
        "type": "response.function_call_arguments.done", "output_index": 0,
        "name": name, "arguments": whole}))
    out.append(_frame("response.output_item.done", {
        "type": "response.output_item.done", "output_index": 0,
        "item": {"type": "function_call", "call_id": "call_r", "name": name,
                 "arguments": whole}}))
    out.append(_frame("response.completed", {"type": "response.completed",
                                              "response": {"id": "r"}}))
    return sse_body(out)
