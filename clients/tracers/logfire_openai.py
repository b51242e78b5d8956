"""Logfire's OpenAI instrumentation, with no Logfire token (send_to_logfire=False) and the
spans exported by the OTel SDK's OTLP exporter to the harness's loopback receiver only."""

import os

import logfire
from openai import OpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_setup import chat, traced

logfire.configure(send_to_logfire=False, console=False, inspect_arguments=False,
                  additional_span_processors=[SimpleSpanProcessor(OTLPSpanExporter())])
logfire.instrument_openai()


def main() -> None:
    try:
        chat(OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0))
    finally:
        logfire.force_flush()


if __name__ == "__main__":
    traced(main)
