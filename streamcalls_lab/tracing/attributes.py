"""A span's attributes and events read as one traced turn, for every convention the kit
knows: one declarative table (:data:`CONVENTIONS`) the OTLP readers both use.

- the GenAI semantic conventions, current: ``gen_ai.output.messages`` (a JSON string, or a
  structured value) whose parts include ``{"type": "tool_call", "id", "name", "arguments"}``;
- the same conventions' older forms: ``gen_ai.choice`` events (their body, or attributes,
  holding ``message.tool_calls``) and the flattened
  ``gen_ai.completion.N.tool_calls.M.{id,name,arguments}`` attributes;
- OpenInference: ``llm.output_messages.N.message.tool_calls.M.tool_call.{id,
  function.name, function.arguments}``;
- Langfuse's OTel attributes (``langfuse.observation.output``) and Logfire's
  (``response_data``), both the recorded message as JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .messages import tool_calls
from .records import TracedCall, TracedTurn

Span = dict[str, Any]
"""A span normalised by a reader: ``name``, ``trace_id``, ``span_id``, ``start`` (Unix
seconds), ``attributes`` (key to Python value) and ``events`` (each ``name``, ``time``,
``attributes``, and ``body`` for a log record joined to its span)."""

_LLM_PREFIXES = ("gen_ai.", "llm.", "langfuse.observation.", "response_data")
_COMPLETION = re.compile(r"gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(id|name|arguments)$")
_OPENINFERENCE = re.compile(r"llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\."
                            r"tool_call\.(id|function\.name|function\.arguments)$")
_FIELD = {"id": "call_id", "name": "tool", "arguments": "args", "function.name": "tool",
          "function.arguments": "args"}


def _flattened(attrs: dict[str, Any], pattern: re.Pattern[str],
               problems: list[str]) -> tuple[list[TracedCall], bool]:
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        if (m := pattern.match(key)) is None:
            continue
        if not isinstance(value, str):
            problems.append(f"{key}: a {type(value).__name__}, not a string")
            value = None
        found.setdefault((int(m[1]), int(m[2])), {})[_FIELD[m[3]]] = value
    calls = [TracedCall(f.get("call_id"), f.get("tool"), f.get("args"))
             for _, f in sorted(found.items())]
    return calls, bool(found)


def _json_attribute(key: str) -> Callable[[Span, list[str]], tuple[list[TracedCall], bool]]:
    def read(span: Span, problems: list[str]) -> tuple[list[TracedCall], bool]:
        if key not in span["attributes"]:
            return [], False
        value = span["attributes"][key]
        if not isinstance(value, str | list | dict):
            problems.append(f"{key}: a {type(value).__name__}, not JSON text or a value")
            return [], False
        calls, seen = tool_calls(value)
        if isinstance(value, str) and not seen and value.strip()[:1] not in ("{", "["):
            problems.append(f"{key}: not a JSON message")
        return calls, True
    return read


def _choice_events(span: Span, problems: list[str]) -> tuple[list[TracedCall], bool]:
    calls: list[TracedCall] = []
    present = False
    for event in span["events"]:
        if event.get("name") != "gen_ai.choice":
            continue
        present = True
        body = event.get("body")
        attrs = event.get("attributes") or {}
        value = body if body is not None else attrs.get("message", attrs)
        found, _ = tool_calls(value)
        calls += found
    return calls, present


@dataclass(frozen=True)
class Convention:
    """One place a tracer keeps a turn's output calls."""

    name: str
    read: Callable[[Span, list[str]], tuple[list[TracedCall], bool]]


CONVENTIONS = (
    Convention("gen_ai.output.messages", _json_attribute("gen_ai.output.messages")),
    Convention("gen_ai.choice events", _choice_events),
    Convention("gen_ai.completion.N.tool_calls",
               lambda s, p: _flattened(s["attributes"], _COMPLETION, p)),
    Convention("llm.output_messages (OpenInference)",
               lambda s, p: _flattened(s["attributes"], _OPENINFERENCE, p)),
    Convention("langfuse.observation.output", _json_attribute("langfuse.observation.output")),
    Convention("response_data (Logfire)", _json_attribute("response_data")),
)
"""In order of preference: the first a span holds is what its tracer kept."""


def _int(attrs: dict[str, Any], keys: tuple[str, ...], problems: list[str]) -> int | None:
    for key in keys:
        if key in attrs:
            value = attrs[key]
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
            problems.append(f"{key}: a {type(value).__name__}, not an integer")
    return None


def _str(attrs: dict[str, Any], key: str, problems: list[str]) -> str | None:
    value = attrs.get(key)
    if value is None or isinstance(value, str):
        return value
    problems.append(f"{key}: a {type(value).__name__}, not a string")
    return None


def is_model_span(span: Span) -> bool:
    attrs = span["attributes"]
    if attrs.get("openinference.span.kind") not in (None, "LLM"):
        return False
    if attrs.get("langfuse.observation.type") not in (None, "generation"):
        return False
    return any(k.startswith(_LLM_PREFIXES) for k in attrs) or any(
        e.get("name", "").startswith("gen_ai.") for e in span["events"])


def turn(span: Span, source: str) -> TracedTurn | None:
    """The traced turn a span records; None when it is no model call."""
    if not is_model_span(span):
        return None
    attrs, problems = span["attributes"], list(span.get("problems", ()))
    out = TracedTurn(f"{source}: span {span['span_id']}", span.get("name", ""),
                     span.get("trace_id", ""), span["span_id"], start=span.get("start"))
    for convention in CONVENTIONS:
        calls, present = convention.read(span, problems)
        if present:
            out.calls, out.keeps_calls = calls, True
            out.kept_in = convention.name
            break
    out.response_id = _str(attrs, "gen_ai.response.id", problems)
    out.input_tokens = _int(attrs, ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                                    "llm.token_count.prompt"), problems)
    out.output_tokens = _int(attrs, ("gen_ai.usage.output_tokens",
                                     "gen_ai.usage.completion_tokens",
                                     "llm.token_count.completion"), problems)
    first = attrs.get("gen_ai.response.time_to_first_chunk")
    if isinstance(first, int | float) and not isinstance(first, bool):
        out.first_chunk = float(first)
    out.problems = problems
    return out
