"""AI SDK DevTools (``.devtools/generations.json``): each streamed step as two captures.

``@ai-sdk/devtools`` (vercel/ai ``packages/devtools``) keeps ``{"runs": [...], "steps":
[...]}``; a streamed step (``type: "stream"``) holds, as JSON *strings* inside the JSON:

- ``raw_chunks``: the provider's own chunks as its SDK parsed them (the middleware forces
  ``includeRawChunks``): ``<stem>__s<i>_raw``, written as SSE, ``event: <type>`` where a
  chunk names its type, as :mod:`.jsonl` rebuilds a chunk log;
- ``raw_response``: the AI SDK's stream parts (``LanguageModelV3StreamPart``), written as
  the UI message stream chunks ``toUIMessageStream`` makes of them (``tool-input-delta``'s
  ``id``/``delta`` as ``toolCallId``/``inputTextDelta``, ``tool-call`` as
  ``tool-input-available``...): ``<stem>__s<i>_parts``, read as ``ai-sdk-ui``. Parts the UI
  stream has no chunk for (``stream-start``, ``response-metadata``, ``tool-input-end``) are
  counted in the provenance, not written.

Both are one turn seen at two layers; fragment texts are exact in both, framing and timing
are not the wire's (``rebuilt`` says so; ``duration_ms`` and ``started_at`` are kept). A
step whose ``error`` is set (the middleware writes ``"Request aborted"`` for a cancelled
stream) is cut where it stopped: no finish is invented, and ``cut_off`` says why, so a call
it cut stays cut. Credentials under secret-named keys of ``raw_request``, ``input`` or
``provider_options`` are collected and never written out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .. import _deepjson as deepjson
from .. import provenance
from ..errors import CaptureError
from ..framing.sse import sse_body, sse_frame
from .jsonl import frame
from .stream import Stream

REBUILT_RAW = ("rebuilt from the provider chunks DevTools parsed (raw_chunks): framing, "
               "JSON whitespace and read timing are not the wire's")
REBUILT_PARTS = ("rebuilt from the AI SDK stream parts DevTools kept (raw_response) as UI "
                 "message stream chunks: fragments exact, framing and timing not the wire's")
_SAME = frozenset(("text-start", "text-delta", "text-end", "reasoning-start",
                   "reasoning-delta", "reasoning-end"))


def is_generations(data: Any) -> bool:
    """The DevTools database: ``runs`` and ``steps`` lists."""
    return (isinstance(data, dict) and isinstance(data.get("steps"), list)
            and isinstance(data.get("runs"), list))


def _inner(step: dict[str, Any], key: str, where: str) -> list[Any] | None:
    text = step.get(key)
    if text is None:
        return None
    if not isinstance(text, str):
        raise CaptureError(where, 0, f"{key} is not a JSON string")
    try:
        value = deepjson.parse(text)
    except orjson.JSONDecodeError as e:
        raise CaptureError(where, 0, f"{key} is not JSON (char {e.pos}: {e.msg})") from None
    if not isinstance(value, list):
        raise CaptureError(where, 0, f"{key} is not a list of chunks")
    return value


def _reason(value: Any) -> Any:
    """``finishReason``: a string in AI SDK 5, ``{unified, raw}`` in 6."""
    return value.get("unified") if isinstance(value, dict) else value


def ui_chunk(part: dict[str, Any]) -> dict[str, Any] | None:
    """The UI message stream chunk one stream part becomes, or None when it has none."""
    kind = part.get("type")
    if kind in _SAME:
        return part
    if kind == "tool-input-start":
        return {"type": kind, "toolCallId": part["id"], "toolName": part["toolName"]}
    if kind == "tool-input-delta":
        return {"type": kind, "toolCallId": part["id"], "inputTextDelta": part["delta"]}
    if kind == "tool-call":
        who = {"toolCallId": part["toolCallId"], "toolName": part["toolName"]}
        given = part.get("input")
        try:
            value = json.loads(given) if isinstance(given, str) else given
        except ValueError:
            return {"type": "tool-input-error", **who, "input": given,
                    "errorText": "Invalid input for tool"}
        return {"type": "tool-input-available", **who, "input": value}
    if kind == "tool-result":
        return {"type": "tool-output-available", "toolCallId": part["toolCallId"],
                "output": part.get("result")}
    if kind == "finish":
        return {"type": "finish", "finishReason": _reason(part.get("finishReason"))}
    if kind == "error":
        error = part.get("error")
        return {"type": "error", "errorText": error if isinstance(error, str)
                else json.dumps(error)}
    return None


def _parts_body(parts: list[Any], where: str, cut: bool) -> tuple[bytes, dict[str, int]]:
    frames, skipped = [], {}
    for i, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise CaptureError(where, 0, f"raw_response[{i}] is not a stream part")
        try:
            chunk = ui_chunk(part)
        except KeyError as e:
            raise CaptureError(where, 0, f"raw_response[{i}] ({part['type']}) has no {e}") \
                from None
        if chunk is None:
            skipped[part["type"]] = skipped.get(part["type"], 0) + 1
            continue
        frames.append(sse_frame(json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))))
    if not cut:
        frames.append(sse_frame("[DONE]"))
    return sse_body(frames), skipped


def _raw_body(chunks: list[Any], where: str) -> bytes:
    out = []
    for i, chunk in enumerate(chunks):
        try:
            out.append(frame(orjson.dumps(chunk), chunk))
        except ValueError as e:
            raise CaptureError(where, 0, f"raw_chunks[{i}]: {e}") from None
    return b"".join(out)


def _secrets(step: dict[str, Any]) -> list[str]:
    found = []
    for key in ("raw_request", "input", "provider_options"):
        value = step.get(key)
        if isinstance(value, str):
            found += provenance.body_secrets(value, form=False)
    return found


def streams(path: Path) -> Iterator[Stream]:
    """Two :class:`Stream`\\s per streamed step: the provider's chunks and the SDK's parts."""
    try:
        data = deepjson.parse(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise CaptureError(str(path), e.pos, f"not JSON: {e.msg}") from None
    if not is_generations(data):
        raise CaptureError(str(path), 0, "not an AI SDK DevTools file: no runs and steps lists")
    stem = path.name.removesuffix(path.suffix)
    for i, step in enumerate(data["steps"]):
        if not isinstance(step, dict) or step.get("type") != "stream":
            continue  # generateText steps stream nothing
        where = f"{path} steps[{i}]"
        error = step.get("error")
        secrets = _secrets(step)
        meta: dict[str, Any] = {
            "source": "ai-sdk-devtools",
            "origin": path.name,
            "run_id": step.get("run_id"),
            "step_number": step.get("step_number"),
            "model": step.get("model_id"),
            "provider_name": step.get("provider"),
            "started": step.get("started_at"),
            "duration_ms": step.get("duration_ms"),
        }
        if error is not None:
            meta["cut_off"] = f"the step ended with an error: {str(error)[:200]}"
        chunks = _inner(step, "raw_chunks", where)
        if chunks:
            yield Stream(f"{stem}__s{i}_raw", _raw_body(chunks, where), None,
                         {**meta, "entry": f"steps/{i}/raw_chunks", "rebuilt": REBUILT_RAW,
                          "note": REBUILT_RAW}, secrets)
        parts = _inner(step, "raw_response", where)
        if parts:
            body, skipped = _parts_body(parts, where, error is not None)
            extra: dict[str, Any] = {"entry": f"steps/{i}/raw_response",
                                     "rebuilt": REBUILT_PARTS, "note": REBUILT_PARTS}
            if skipped:
                extra["parts_not_written"] = skipped
            yield Stream(f"{stem}__s{i}_parts", body, None, {**meta, **extra}, secrets)
