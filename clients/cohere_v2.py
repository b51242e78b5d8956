"""cohere SDK, `ClientV2.chat_stream`: `tool-call-start` opens a call (id, name), each
`tool-call-delta`'s `function.arguments` is appended, `tool-call-end` hands it on; pointed
at the harness by `base_url`."""

import os

import cohere
from accumulator import emit
from loop import each_case


def main() -> None:
    client = cohere.ClientV2(api_key="lab-dummy", base_url=os.environ["STREAMCALLS_BASE_URL"])
    open_calls: dict[int, dict] = {}
    for event in client.chat_stream(model="streamcalls-lab",
                                    messages=[{"role": "user", "content": "go"}]):
        if event.type == "tool-call-start":
            call = event.delta.message.tool_calls
            open_calls[event.index] = {"id": call.id, "name": call.function.name,
                                       "args": call.function.arguments or ""}
        elif event.type == "tool-call-delta":
            open_calls[event.index]["args"] += event.delta.message.tool_calls.function.arguments
        elif event.type == "tool-call-end":
            call = open_calls.pop(event.index)
            emit(call["id"], call["name"], args=call["args"])


if __name__ == "__main__":
    each_case(main)
