"""openinference-instrumentation-anthropic on a streamed Messages turn."""

import os

from anthropic import Anthropic
from openinference.instrumentation.anthropic import AnthropicInstrumentor
from otel_setup import traced, tracer_provider

AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)


def main() -> None:
    client = Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], max_retries=0)
    stream = client.messages.create(
        model="torture", max_tokens=1024, stream=True,
        messages=[{"role": "user", "content": "go"}],
        tools=[{"name": "lookup", "input_schema": {"type": "object"}}])
    for _ in stream:
        pass


if __name__ == "__main__":
    traced(main)
