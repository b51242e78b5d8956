"""Claude Code / Agent SDK stream-json: the Anthropic events a CLI run printed, one turn each.

``claude -p --output-format stream-json --include-partial-messages`` prints one JSON object
per line: ``system`` (``init``), then for every API call its raw Messages events, each
wrapped as ``{"type": "stream_event", "event": {...}, "session_id", "parent_tool_use_id",
"uuid"}``, then the whole ``assistant`` message (Claude Code prints one per content block,
repeating what the deltas built), ``user`` tool results, and a closing ``result``. The
Agent SDKs (Python ``StreamEvent``, TypeScript ``SDKPartialAssistantMessage``) yield the same
objects, and harnesses keep them as a JSON array, under ``messages``, or as per-call lists
of the bare Anthropic events: :func:`streams` reads those from ``.json`` too.

Each API call becomes one capture: its events from ``message_start`` to ``message_stop``,
written as the SSE the Messages API sends (``event: <type>`` then ``data:``). Events are
grouped by who streamed them (``session_id`` and ``parent_tool_use_id``: a subagent's
stream interleaves with its parent's), never by position in the file. Blocks are read by
their ``index``: a ``message_start`` that already carries content has those blocks
announced here (``content_block_start`` at the same index, rebuilt), so deltas that fill
them are not orphans. Whole ``assistant`` messages are never a second source of calls: one
whose id a stream already gave is a repeat, and one no stream gave (a run without
``--include-partial-messages``) has no fragments to read; the provenance counts them.

What is lost, and said so in ``rebuilt``: the wire's framing, whitespace inside the JSON
(the CLI re-serialised each event), ``ping``\\s the CLI did not print, and all timing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .. import _deepjson as deepjson
from ..errors import CaptureError
from ..providers.anthropic import FORMAT as MESSAGES
from .jsonl import frame
from .stream import Stream

REBUILT = ("rebuilt from parsed stream-json events: SSE framing, JSON whitespace and read "
           "timing are not the wire's")
LINE_TYPES = frozenset(("stream_event", "system", "assistant", "user", "result"))
"""What Claude Code's stream-json lines say they are (``SDKMessage``)."""
EVENTS = frozenset(name for names in MESSAGES.events.values() for name in names)
"""The Messages API's stream events (as its format declares them), as a harness may keep
them unwrapped."""
_STARTS = frozenset(("message_start", "content_block_delta"))  # what makes a list a stream


@dataclass
class _Turn:
    key: tuple[str, ...]
    where: str
    events: list[dict[str, Any]] = field(default_factory=list)
    message_id: str | None = None
    model: str | None = None
    ended: bool = False


@dataclass
class _Fold:
    """Every turn of one file, in the order their first event came."""

    turns: list[_Turn] = field(default_factory=list)
    open: dict[tuple[str, ...], _Turn] = field(default_factory=dict)
    whole: dict[str, str] = field(default_factory=dict)  # assistant message id -> where

    def event(self, key: tuple[str, ...], event: dict[str, Any], where: str) -> None:
        kind = event.get("type")
        turn = self.open.get(key)
        if kind == "message_start" or turn is None or turn.ended:
            turn = _Turn(key, where)
            self.turns.append(turn)
            self.open[key] = turn
            message = event.get("message")
            if kind == "message_start" and isinstance(message, dict):
                mid, model = message.get("id"), message.get("model")
                turn.message_id = mid if isinstance(mid, str) else None
                turn.model = model if isinstance(model, str) else None
        turn.events.append(event)
        if kind == "message_stop":
            turn.ended = True

    def assistant(self, line: dict[str, Any], where: str) -> None:
        message = line.get("message")
        mid = message.get("id") if isinstance(message, dict) else None
        if isinstance(mid, str):
            self.whole.setdefault(mid, where)


def _announced(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn's events with each block a ``message_start`` already carried announced at its
    index (right after it), unless a ``content_block_start`` announces that index itself."""
    if not events or events[0].get("type") != "message_start":
        return events
    message = events[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not content:
        return events
    started = {e.get("index") for e in events if e.get("type") == "content_block_start"}
    added = []
    for i, block in enumerate(content):
        if i in started or not isinstance(block, dict):
            continue
        start = dict(block)
        if start.get("type") in ("tool_use", "server_tool_use") and "input" in start:
            start["input"] = {}  # the Messages API announces a call empty; deltas fill it
        added.append({"type": "content_block_start", "index": i, "content_block": start})
    return [events[0], *added, *events[1:]]


def body(events: Iterable[dict[str, Any]]) -> bytes:
    """The SSE body the Messages API would have sent for these events (framing rebuilt)."""
    return b"".join(frame(orjson.dumps(e), e) for e in events)


def _wrapped(line: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, Any]] | None:
    event = line.get("event")
    if line.get("type") != "stream_event" or not isinstance(event, dict):
        return None
    who = (str(line.get("session_id", "")), str(line.get("parent_tool_use_id") or ""))
    return who, event


def _feed(fold: _Fold, item: Any, key: tuple[str, ...], where: str) -> None:
    if not isinstance(item, dict):
        return
    wrapped = _wrapped(item)
    if wrapped is not None:
        who, event = wrapped
        if not isinstance(event.get("type"), str):
            raise CaptureError(where, 0, "stream_event without an event type")
        fold.event((*key, *who), event, where)
    elif item.get("type") in EVENTS:
        fold.event(key, item, where)
    elif item.get("type") == "assistant":
        fold.assistant(item, where)


# -- NDJSON, as the CLI prints it -----------------------------------------------------------
def is_stream_json_line(payload: Any) -> bool:
    """A stream-json line: a message the CLI names, with the session it belongs to."""
    return (isinstance(payload, dict) and payload.get("type") in LINE_TYPES
            and "session_id" in payload)


def _fold_lines(raw: bytes, source: str) -> _Fold:
    fold = _Fold()
    at = 0
    for n, line in enumerate(raw.splitlines(keepends=True), 1):
        text = line.strip()
        if text:
            try:
                payload = deepjson.parse(text)
            except orjson.JSONDecodeError as e:
                raise CaptureError(source, at, f"line {n} is not JSON: {e}") from None
            if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
                raise CaptureError(source, at, f"line {n} is not a stream-json message "
                                               "(no 'type')")
            if payload["type"] == "stream_event" and _wrapped(payload) is None:
                raise CaptureError(source, at, f"line {n}: stream_event without an event object")
            _feed(fold, payload, (), f"line {n}")
        at += len(line)
    return fold


# -- JSON: an array, ``messages``, per-call event lists -------------------------------------
def _is_stream_list(items: list[Any]) -> bool:
    return any(isinstance(item, dict)
               and (_wrapped(item) is not None or item.get("type") in _STARTS)
               for item in items)


def _fold_json(data: Any) -> _Fold:
    """Every list of stream events anywhere in the document, each its own stream (so two
    calls kept side by side never merge), in document order."""
    fold = _Fold()
    todo: list[tuple[Any, str]] = [(data, "$")]
    while todo:
        node, path = todo.pop()
        if isinstance(node, dict):
            todo += [(v, f"{path}.{k}") for k, v in reversed(list(node.items()))]
        elif isinstance(node, list):
            if _is_stream_list(node):
                for i, item in enumerate(node):
                    _feed(fold, item, (path,), f"{path}[{i}]")
            else:
                todo += [(v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node)))]
    return fold


def holds_stream_events(data: Any) -> bool:
    """Whether a parsed JSON document keeps stream-json or Messages events anywhere."""
    return bool(_fold_json(data).turns)


def _streams(fold: _Fold, path: Path, entry: str) -> Iterator[Stream]:
    streamed = {t.message_id for t in fold.turns if t.message_id}
    whole_only = [m for m in fold.whole if m not in streamed]
    if not fold.turns:
        why = "no stream events in it"
        if whole_only:
            why = (f"only whole assistant messages ({len(whole_only)}), no stream events: "
                   "run claude with --include-partial-messages to keep the fragments")
        raise CaptureError(str(path), 0, why)
    stem = path.name.removesuffix(path.suffix)
    for k, turn in enumerate(fold.turns):
        meta: dict[str, Any] = {
            "source": "claude-stream-json",
            "origin": path.name,
            "entry": f"{entry} from {turn.where}",
            "message_id": turn.message_id,
            "model": turn.model,
            "rebuilt": REBUILT,
            "note": REBUILT,
        }
        if len(turn.key) >= 2 and turn.key[-1]:
            meta["parent_tool_use_id"] = turn.key[-1]
        if whole_only:
            meta["whole_messages_not_streamed"] = len(whole_only)
        if not turn.ended:
            meta["cut_off"] = "the recording has no message_stop for this message"
        yield Stream(f"{stem}__m{k}", body(_announced(turn.events)), None, meta)


def streams(path: Path) -> Iterator[Stream]:
    """One :class:`Stream` per API call a stream-json file (NDJSON or JSON) recorded."""
    raw = path.read_bytes()
    if path.suffix.lower() == ".json":
        try:
            data = deepjson.parse(raw)
        except orjson.JSONDecodeError as e:
            raise CaptureError(str(path), 0, f"not JSON: {e}") from None
        yield from _streams(_fold_json(data), path, "JSON")
    else:
        yield from _streams(_fold_lines(raw, str(path)), path, "stream-json")
