"""openinference-instrumentation-openai on a streamed Chat Completions turn."""

import os

from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from otel_setup import chat, traced, tracer_provider

OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)


def main() -> None:
    chat(OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0))


if __name__ == "__main__":
    traced(main)
