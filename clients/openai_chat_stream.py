"""openai SDK, Chat Completions, the stream helper: each `tool_calls.function.arguments.done`
event is a finished call (the id comes from the helper's snapshot)."""

import os

from accumulator import emit
from loop import each_case
from openai import OpenAI


def main() -> None:
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    with client.chat.completions.stream(
            model="torture", messages=[{"role": "user", "content": "go"}]) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.done":
                call = stream.current_completion_snapshot.choices[0].message.tool_calls[event.index]
                emit(call.id, event.name, args=event.arguments)


if __name__ == "__main__":
    each_case(main)
