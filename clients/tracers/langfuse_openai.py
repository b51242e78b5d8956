"""Langfuse's OpenAI integration (``langfuse.openai``), exporting through its OTel span
processor to the harness's loopback receiver only: LANGFUSE_HOST is the receiver (its
exporter posts to <host>/api/public/otel/v1/traces, which the receiver serves); fake keys."""

import os

endpoint = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
os.environ.update(LANGFUSE_HOST=endpoint, LANGFUSE_BASE_URL=endpoint,
                  LANGFUSE_PUBLIC_KEY="pk-lf-torture", LANGFUSE_SECRET_KEY="sk-lf-torture",
                  LANGFUSE_TRACING_ENVIRONMENT="torture", LANGFUSE_SAMPLE_RATE="1")

import langfuse.openai  # noqa: E402, F401  (patches the openai SDK)
from langfuse import get_client  # noqa: E402
from otel_setup import chat_main, traced  # noqa: E402

client = get_client()


if __name__ == "__main__":
    traced(chat_main(client.flush))
