"""openai SDK, Responses, the stream helper: the arguments are the helper's accumulated
snapshot, handed on at the call's `response.output_item.done`."""

import os

from accumulator import emit
from loop import each_case
from openai import OpenAI


def main() -> None:
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    args: dict[int, str] = {}
    with client.responses.stream(model="torture", input="go") as stream:
        for event in stream:
            if event.type == "response.function_call_arguments.delta":
                args[event.output_index] = event.snapshot
            elif event.type == "response.output_item.done" and event.item.type == "function_call":
                emit(event.item.call_id, event.item.name, args=args.get(event.output_index, ""))


if __name__ == "__main__":
    each_case(main)
