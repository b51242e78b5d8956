"""Crafted trace exports over the bundled data/ captures: one span per turn, written the way
each convention writes it, with a fault dropped into chosen calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streamcalls_lab.tracing import wire_turns

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def s(value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def span(n: int, attrs: dict[str, Any], events: list[dict[str, Any]] | None = None) -> dict:
    return {"traceId": f"{n:032x}", "spanId": f"{n + 1:016x}", "name": "chat",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
            "attributes": [{"key": k, "value": s(v) if not isinstance(v, dict) else v}
                           for k, v in attrs.items()], "events": events or []}


def otlp(spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


Fault = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def genai(turn_calls: list[dict[str, Any]]) -> str:
    parts = [{"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["args"]}
             for c in turn_calls]
    return json.dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}])


def openinference(turn_calls: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for m, c in enumerate(turn_calls):
        p = f"llm.output_messages.0.message.tool_calls.{m}.tool_call."
        out |= {p + "id": c["id"], p + "function.name": c["name"],
                p + "function.arguments": c["args"]}
    return out


@pytest.fixture(scope="session")
def wire():
    return [w for w in wire_turns(DATA) if w.calls]


def target(wire) -> int:
    """The first turn whose calls all parse: a fault there is the only thing wrong."""
    for n, w in enumerate(wire):
        try:
            [json.loads(c.args) for c in w.calls]
        except ValueError:
            continue
        return n
    raise AssertionError("no complete turn in data/")


@pytest.fixture
def export(tmp_path: Path, wire):
    """export(style, fault=None) -> path: every wire turn with calls as one span."""

    def make(style: str = "genai", fault: Fault | None = None, at: int | None = None,
             **extra: Any) -> Path:
        """``at``: the turn the fault is put in (default: the first complete one)."""
        at = target(wire) if at is None else at
        spans = []
        for n, w in enumerate(wire):
            calls = [{"id": c.call_id, "name": c.tool, "args": c.args} for c in w.calls]
            if fault is not None and n == at:
                calls = fault(calls)
            attrs: dict[str, Any] = {"gen_ai.response.id": w.response_id,
                                     "gen_ai.operation.name": "chat"}
            if style == "genai":
                attrs["gen_ai.output.messages"] = genai(calls)
            elif style == "completion":
                for m, c in enumerate(calls):
                    attrs |= {f"gen_ai.completion.0.tool_calls.{m}.{k}": c[v]
                              for k, v in (("id", "id"), ("name", "name"),
                                           ("arguments", "args"))}
            elif style == "openinference":
                attrs = {"openinference.span.kind": "LLM", **openinference(calls)}
            attrs |= extra
            spans.append(span(n, attrs))
        path = tmp_path / f"{style}.json"
        path.write_text(json.dumps(otlp(spans)))
        return path

    return make
