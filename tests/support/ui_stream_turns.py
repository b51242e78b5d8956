"""AI SDK UI message stream test turns: chunks as ``JsonToSseTransformStream`` frames them,
and the documented server-tool turn."""

from __future__ import annotations

import json


def ui(*chunks: dict | str) -> bytes:
    """Chunks as the SDK writes them: ``data: <JSON.stringify>`` and a blank line, then
    ``data: [DONE]``."""
    return "".join(f"data: {c if isinstance(c, str) else json.dumps(c, separators=(',', ':'))}"
                   "\n\n" for c in (*chunks, "[DONE]")).encode()


CALL = "call_fJdQDqnXeGxTmr4E3YPSR7Ar"


SERVER_TOOL = ui(  # one call the server runs, then a second step with text
    {"type": "start", "messageId": "msg_1"},
    {"type": "start-step"},
    {"type": "tool-input-start", "toolCallId": CALL, "toolName": "getWeatherInformation"},
    {"type": "tool-input-delta", "toolCallId": CALL, "inputTextDelta": '{"city":"'},
    {"type": "tool-input-delta", "toolCallId": CALL, "inputTextDelta": 'San Francisco"}'},
    {"type": "tool-input-available", "toolCallId": CALL, "toolName": "getWeatherInformation",
     "input": {"city": "San Francisco"}},
    {"type": "tool-output-available", "toolCallId": CALL,
     "output": {"city": "San Francisco", "weather": "sunny"}},
    {"type": "finish-step"},
    {"type": "start-step"},
    {"type": "text-start", "id": "txt-0"},
    {"type": "text-delta", "id": "txt-0", "delta": "It is sunny."},
    {"type": "text-end", "id": "txt-0"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
)
