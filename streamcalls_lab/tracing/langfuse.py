"""A Langfuse export: observations as JSON or JSON lines, in any of the shapes Langfuse gives
them (the UI's export, the public API's ``{"data": [...]}``, traces holding their
``observations``). Each ``GENERATION`` is one traced turn; its ``output`` is the message its
integration recorded."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import CaptureError
from .messages import tool_calls
from .records import MAX_SPANS, TracedTurn, json_lines


def _time(value: Any, key: str, problems: list[str]) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    problems.append(f"{key}: not an ISO time")
    return None


def _tokens(obs: dict[str, Any], side: str, problems: list[str]) -> int | None:
    legacy = {"input": "promptTokens", "output": "completionTokens"}[side]
    for holder, key in ((obs.get("usageDetails"), side), (obs.get("usage"), side),
                        (obs, legacy)):
        if isinstance(holder, dict) and holder.get(key) is not None:
            value = holder[key]
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            problems.append(f"usage {key}: a {type(value).__name__}, not an integer")
    return None


def generation(obs: dict[str, Any], source: str) -> TracedTurn:
    problems: list[str] = []
    ident = obs.get("id") if isinstance(obs.get("id"), str) else ""
    out = TracedTurn(f"{source}: observation {ident}", str(obs.get("name") or ""),
                     str(obs.get("traceId") or ""), ident)
    out.start = _time(obs.get("startTime"), "startTime", problems)
    first = _time(obs.get("completionStartTime"), "completionStartTime", problems)
    if first is not None and out.start is not None:
        out.first_chunk = first - out.start
    output = obs.get("output")
    if output is not None:
        out.calls, out.keeps_calls = tool_calls(output)
        out.kept_in = "output"
    out.input_tokens = _tokens(obs, "input", problems)
    out.output_tokens = _tokens(obs, "output", problems)
    meta = obs.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("response_id"), str):
        out.response_id = meta["response_id"]
    out.problems = problems
    return out


def turns_of(docs: list[Any], source: str) -> list[TracedTurn]:
    out: list[TracedTurn] = []
    todo = list(docs)
    while todo:
        item = todo.pop(0)
        if isinstance(item, list):
            todo[:0] = item
        elif isinstance(item, dict):
            if isinstance(item.get("data"), list):
                todo[:0] = item["data"]
            if isinstance(item.get("observations"), list):
                todo[:0] = item["observations"]
            if str(item.get("type", "")).upper() == "GENERATION":
                if len(out) >= MAX_SPANS:
                    raise CaptureError(source, 0, f"more than {MAX_SPANS} generations")
                out.append(generation(item, source))
    return sorted(out, key=lambda t: t.start or 0.0)


def looks_like(docs: list[Any]) -> bool:
    first = docs[0] if docs else None
    if isinstance(first, list):
        first = first[0] if first else None
    return isinstance(first, dict) and ({"data", "observations", "type", "traceId"}
                                        & first.keys()) != set()


def read(path: str | Path) -> list[TracedTurn]:
    path = Path(path)
    return turns_of(json_lines(path.read_bytes(), str(path)), str(path))
