"""OTLP protobuf: an ``ExportTraceServiceRequest`` (or ``ExportLogsServiceRequest``) read by
the real ``opentelemetry-proto`` schema, then mapped to OTLP JSON (protobuf's own JSON
mapping) so both encodings go through one reader, :mod:`.otlp_json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import CaptureError
from .otlp_json import turns_of
from .records import MAX_BYTES, TracedTurn


def documents(raw: bytes, source: str, kind: str = "traces") -> list[Any]:
    """The OTLP JSON documents of one protobuf body; ``kind``: ``traces`` or ``logs``."""
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    if len(raw) > MAX_BYTES:
        raise CaptureError(source, MAX_BYTES, f"trace export over {MAX_BYTES} bytes: not read")
    message = (ExportTraceServiceRequest if kind == "traces" else ExportLogsServiceRequest)()
    try:
        message.ParseFromString(raw)  # protobuf bounds nesting itself (recursion limit 100)
    except (DecodeError, RecursionError) as e:
        raise CaptureError(source, 0, f"not an OTLP protobuf {kind} request: {e}") from None
    return [MessageToDict(message)]


def read(path: str | Path) -> list[TracedTurn]:
    """The traced turns of an OTLP protobuf export (a traces request; logs as a sibling
    ``*.logs.pb``, when there is one, are joined to their spans)."""
    path = Path(path)
    docs = documents(path.read_bytes(), str(path))
    logs = path.with_name(path.name.removesuffix(".pb") + ".logs.pb")
    if logs.exists():
        docs += documents(logs.read_bytes(), str(logs), "logs")
    return turns_of(docs, str(path))
