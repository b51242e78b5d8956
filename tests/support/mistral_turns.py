"""Mistral Conversations test turns: events as the API frames them, and the documented
weather turn."""

from __future__ import annotations

import json

STARTED = {"type": "conversation.response.started", "conversation_id": "conv_1"}


DONE = {"type": "conversation.response.done",
        "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}}


def mistral(*events: dict, named: bool = True) -> bytes:
    """Events as the API frames them: ``event: <type>`` then ``data: <json>``."""
    return "".join(f"{'event: ' + e['type'] + chr(10) if named else ''}"
                   f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events).encode()


def fc(arguments: str, call_id: str = "D681PevKs", name: str = "get_weather",
       entry: str = "fc_1", index: int = 1) -> dict:
    """One ``function.call.delta``: the name and both ids on every one."""
    return {"type": "function.call.delta", "output_index": index, "id": entry, "name": name,
            "tool_call_id": call_id, "arguments": arguments}


def say(content: object, index: int = 0) -> dict:
    return {"type": "message.output.delta", "output_index": index, "id": "msg_1",
            "content_index": 0, "role": "assistant", "content": content}


WEATHER = mistral(STARTED, say("Checking "), say("the weather."),
                  fc('{"city"'), fc(':"Paris"}'), DONE)
