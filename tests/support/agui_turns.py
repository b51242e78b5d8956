"""AG-UI test turns: events as the Python ``EventEncoder`` writes them, and the
documented weather turn, whole and in chunks."""

from __future__ import annotations

import json

RUN = {"threadId": "t1", "runId": "r1"}


def agui(*events: dict | str) -> bytes:
    """Events as ``EventEncoder`` writes them: ``data: <json>`` and a blank line."""
    return "".join(f"data: {e if isinstance(e, str) else json.dumps(e, separators=(',', ':'))}"
                   "\n\n" for e in events).encode()


WEATHER = agui(
    {"type": "RUN_STARTED", **RUN},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Checking the weather."},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "TOOL_CALL_START", "toolCallId": "call_1", "toolCallName": "get_weather",
     "parentMessageId": "m1"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "call_1", "delta": '{"city":'},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "call_1", "delta": '"Paris"}'},
    {"type": "TOOL_CALL_END", "toolCallId": "call_1"},
    {"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "call_1",
     "content": '{"weather":"sunny"}', "role": "tool"},
    {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/lastCity", "value": "Paris"}]},
    {"type": "RUN_FINISHED", **RUN, "outcome": {"type": "success"}},
)


CHUNKED = agui({"type": "RUN_STARTED", **RUN},
               {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f",
                "delta": '{"x"'},
               {"type": "TOOL_CALL_CHUNK", "delta": ":1}"},
               {"type": "RAW", "event": {"any": "thing"}},
               {"type": "TOOL_CALL_CHUNK", "toolCallId": "b", "toolCallName": "g"},
               {"type": "TOOL_CALL_CHUNK", "toolCallId": "b", "delta": "{}"},
               {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "done"},
               {"type": "RUN_FINISHED", **RUN})
"""Calls in chunks, as the client expands them (``test_documented_turns`` reads it row by
row)."""
