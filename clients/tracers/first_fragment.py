"""A hand-written tracer with the classic bug: it records each call's arguments from the
chunk that announced the call only (a new buffer per id; later fragments, which carry no
id, are dropped). The live harness must find it."""

import json
import os

from openai import OpenAI
from opentelemetry import trace
from otel_setup import traced


def main() -> None:
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    with trace.get_tracer("first-fragment").start_as_current_span("chat torture") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        calls: list[dict[str, str]] = []
        for chunk in client.chat.completions.create(
                model="torture", stream=True, messages=[{"role": "user", "content": "go"}]):
            for choice in chunk.choices:
                for call in choice.delta.tool_calls or ():
                    if call.id:  # the bug: only the announcing chunk is read
                        calls.append({"type": "tool_call", "id": call.id,
                                      "name": call.function.name,
                                      "arguments": call.function.arguments or ""})
        span.set_attribute("gen_ai.output.messages", json.dumps(
            [{"role": "assistant", "parts": calls}]))


if __name__ == "__main__":
    traced(main)
