"""Logfire's OpenAI instrumentation, with no Logfire token (send_to_logfire=False) and the
spans exported by the OTel SDK's OTLP exporter to the harness's loopback receiver only."""


import logfire
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_setup import chat_main, traced

logfire.configure(send_to_logfire=False, console=False, inspect_arguments=False,
                  additional_span_processors=[SimpleSpanProcessor(OTLPSpanExporter())])
logfire.instrument_openai()


if __name__ == "__main__":
    traced(chat_main(logfire.force_flush))
