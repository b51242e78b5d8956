"""The OpenTelemetry SDK for the traced programs here: spans and logs exported over
OTLP/HTTP protobuf to OTEL_EXPORTER_OTLP_ENDPOINT (the harness's loopback receiver), and
``traced(main)``: the loop protocol with the exporters flushed before each end line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loop import each_case
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

assert os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].startswith("http://127.0.0.1:")

tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
logger_provider = LoggerProvider()
logger_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter()))


def traced(main: Callable[[], object]) -> None:
    def case() -> None:
        try:
            main()
        finally:
            tracer_provider.force_flush()
            logger_provider.force_flush()

    each_case(case)


def chat(client: object) -> None:
    """One streamed Chat Completions turn with a tool, read to its end (as an app does)."""
    stream = client.chat.completions.create(  # type: ignore[attr-defined]
        model="torture", stream=True, messages=[{"role": "user", "content": "go"}],
        tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}])
    for _ in stream:
        pass


def chat_main(flush: Callable[[], object] = lambda: None) -> Callable[[], None]:
    """A case's program: one streamed Chat turn against the case's base URL, then the
    tracer's own ``flush``."""
    from openai import OpenAI

    def main() -> None:
        try:
            chat(OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0))
        finally:
            flush()

    return main
