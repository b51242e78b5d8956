"""Tool calls out of a recorded output value, whatever shape a tracer kept it in.

One place knows the shapes: an OpenAI Chat message (``tool_calls[].function``) or its
choices, a Responses output (``function_call`` items), an Anthropic message (``tool_use``
blocks, whose ``input`` is a parsed value), the GenAI semantic conventions' message parts
(``{"type": "tool_call", "id", "name", "arguments"}``) and a legacy ``function_call``.
"""

from __future__ import annotations

from typing import Any

import orjson

from .. import _deepjson as deepjson
from .._deepjson import dumps
from .records import TracedCall

_WALK_LIMIT = 64  # containers looked into for messages: a value is never walked without end


def _text(value: Any) -> tuple[str | None, bool]:
    """Argument text as recorded, and whether the tracer kept a parsed value instead."""
    if value is None:
        return None, False
    if isinstance(value, str):
        return value, False
    return dumps(value), True


def _call(call_id: Any, name: Any, args: Any) -> TracedCall:
    text, structured = _text(args)
    return TracedCall(call_id if isinstance(call_id, str) else None,
                      name if isinstance(name, str) else None, text, structured)


def _one(item: dict[str, Any]) -> TracedCall | None:
    """A single call object, in any of the shapes above; None: not a call."""
    kind = item.get("type")
    if isinstance(item.get("function"), dict):  # Chat tool_calls[]
        f = item["function"]
        return _call(item.get("id"), f.get("name"), f.get("arguments"))
    if kind in ("function_call", "custom_tool_call"):  # Responses output item
        return _call(item.get("call_id") or item.get("id"), item.get("name"),
                     item.get("arguments", item.get("input")))
    if kind in ("tool_use", "server_tool_use"):  # Anthropic content block
        return _call(item.get("id"), item.get("name"), item.get("input"))
    if kind == "tool_call":  # GenAI semantic conventions message part
        return _call(item.get("id"), item.get("name"), item.get("arguments"))
    return None


def tool_calls(value: Any) -> tuple[list[TracedCall], bool]:
    """Every call in a recorded output value, in order, and whether the value had a place
    for calls at all (a ``tool_calls`` key, a parts list…): a message with text only and no
    such place says the tracer kept no calls, not that there were none."""
    if isinstance(value, str):
        try:
            value = deepjson.parse(value)
        except orjson.JSONDecodeError:
            return [], False
    out: list[TracedCall] = []
    seen = False
    todo, walked = [value], 0
    while todo and walked < _WALK_LIMIT:
        v = todo.pop(0)
        walked += 1
        if isinstance(v, list):
            todo[:0] = v
            continue
        if not isinstance(v, dict):
            continue
        if (call := _one(v)) is not None:
            out.append(call)
            seen = True
            continue
        if isinstance(v.get("function_call"), dict):  # the legacy single call
            f = v["function_call"]
            out.append(_call(None, f.get("name"), f.get("arguments")))
            seen = True
        for key in ("tool_calls", "parts", "content", "output", "choices", "message",
                    "messages"):
            if key in v and isinstance(v[key], list | dict):
                seen = seen or key in ("tool_calls", "parts") or (
                    key in ("content", "output") and isinstance(v[key], list))
                todo.append(v[key])
    return out, seen
