"""AI SDK 4 data stream test turns: parts as ``formatDataStreamPart`` writes them, and the
documented weather turn."""

from __future__ import annotations

import json


def parts(*items: tuple[str, object]) -> bytes:
    """Parts as ``formatDataStreamPart`` writes them: code, colon, compact JSON, LF."""
    return "".join(f"{code}:{json.dumps(value, separators=(',', ':'))}\n"
                   for code, value in items).encode()


USAGE = {"promptTokens": 10, "completionTokens": 5}


STEP = ("f", {"messageId": "msg-1"})


WHO = {"toolCallId": "call_1", "toolName": "get_weather"}


WEATHER = parts(
    STEP, ("0", "Checking "), ("0", "the weather."),
    ("b", WHO),
    ("c", {"toolCallId": "call_1", "argsTextDelta": '{"city":'}),
    ("c", {"toolCallId": "call_1", "argsTextDelta": '"Paris"}'}),
    ("9", {**WHO, "args": {"city": "Paris"}}),
    ("a", {"toolCallId": "call_1", "result": {"weather": "sunny"}}),
    ("e", {"finishReason": "tool-calls", "usage": USAGE, "isContinued": False}),
    ("d", {"finishReason": "tool-calls", "usage": USAGE}),
)
