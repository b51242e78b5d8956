"""Whole (non-streamed) responses of a turn, as each API documents them: what a server
answers to the request a streamed turn answered, for ``conform`` to hold the stream to.

The kit writes streams only; these are written here, from the same :class:`~turns.Script`,
in the three main formats (the shapes ``tests/providers/test_whole.py`` reads).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from streamcalls_lab.turns import Call, Script, Text

WHOLE_FORMATS = ("openai-chat", "anthropic-messages", "openai-responses")


def _text(turn: Script) -> str:
    return "".join("".join(s.fragments) for s in turn.segments if isinstance(s, Text))


def _object(args: str) -> Any:
    return json.loads(args) if args.strip() else {}


def chat(turn: Script, stop: str | None = None) -> dict[str, Any]:
    calls = [{"id": c.call_id, "type": "function",
              "function": {"name": c.tool, "arguments": c.args or "{}"}} for c in turn.calls]
    message: dict[str, Any] = {"role": "assistant", "content": _text(turn) or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-whole", "object": "chat.completion", "created": 0,
            "model": turn.model, "choices": [{
                "index": 0, "message": message,
                "finish_reason": stop or ("tool_calls" if calls else "stop")}]}


def anthropic(turn: Script, stop: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for seg in turn.segments:
        if isinstance(seg, Text):
            content.append({"type": "text", "text": "".join(seg.fragments)})
        elif isinstance(seg, Call):
            content.append({"type": "tool_use", "id": seg.call_id, "name": seg.tool,
                            "input": _object(seg.args)})
    return {"id": "msg_whole", "type": "message", "role": "assistant", "model": turn.model,
            "content": content, "stop_reason": stop or ("tool_use" if turn.calls else
                                                        "end_turn"),
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def responses(turn: Script, stop: str | None = None) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            output.append({"type": "message", "id": f"msg_{n}", "status": "completed",
                           "role": "assistant", "content": [
                               {"type": "output_text", "text": "".join(seg.fragments),
                                "annotations": []}]})
        elif isinstance(seg, Call):
            output.append({"type": "function_call", "id": f"fc_{n}", "call_id": seg.call_id,
                           "name": seg.tool, "arguments": seg.args or "{}",
                           "status": "completed"})
    return {"id": "resp_whole", "object": "response", "created_at": 0, "model": turn.model,
            "status": stop or "completed", "output": output}


WRITERS: dict[str, Callable[..., dict[str, Any]]] = {
    "openai-chat": chat, "anthropic-messages": anthropic, "openai-responses": responses}


def whole(fmt: str, turn: Script, stop: str | None = None) -> bytes:
    """The whole response to ``turn``'s request in ``fmt`` (``stop``: another stop reason)."""
    return json.dumps(WRITERS[fmt](turn, stop)).encode()
