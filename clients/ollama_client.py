"""ollama SDK, `Client(host=...).chat(stream=True)`: each chunk's `message.tool_calls` (Ollama
sends each call whole, its `arguments` parsed)."""

import os

import ollama
from accumulator import emit
from loop import each_case


def main() -> None:
    client = ollama.Client(host=os.environ["STREAMCALLS_BASE_URL"])
    for chunk in client.chat(model="streamcalls-lab", stream=True,
                             messages=[{"role": "user", "content": "go"}]):
        for call in chunk.message.tool_calls or []:
            emit(getattr(call, "id", None), call.function.name, input=call.function.arguments)


if __name__ == "__main__":
    each_case(main)
