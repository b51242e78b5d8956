"""mistralai SDK, `beta.conversations.start_stream`: each `function.call.delta` event's
`arguments` appended to its call (by `output_index`; the event repeats the id and name),
every call handed on at `conversation.response.done` (no per-call done event); pointed at
the harness by `server_url`."""

import os

from accumulator import emit
from loop import each_case
from mistralai.client import Mistral


def main() -> None:
    client = Mistral(api_key="lab-dummy", server_url=os.environ["STREAMCALLS_BASE_URL"])
    calls: dict[int, dict] = {}
    with client.beta.conversations.start_stream(inputs="go", model="streamcalls-lab") as events:
        for event in events:
            data = event.data
            if data.type == "function.call.delta":
                call = calls.setdefault(data.output_index or 0, {
                    "id": data.tool_call_id, "name": data.name, "args": ""})
                call["args"] += data.arguments
            elif data.type == "conversation.response.done":
                for call in calls.values():
                    emit(call["id"], call["name"], args=call["args"])
                calls.clear()


if __name__ == "__main__":
    each_case(main)
