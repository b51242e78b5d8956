"""OpenAI Assistants run streams: run steps whose deltas carry tool calls, keyed by index.

https://platform.openai.com/docs/api-reference/assistants-streaming/events

Every event is an SSE ``event:`` line naming it (``thread.run.step.delta``) and a ``data:``
line holding the object it is about, which names its kind in ``object`` (``thread.run``,
``thread.run.step``, ``thread.run.step.delta``, ``thread.message``,
``thread.message.delta``); the stream ends with ``event: done`` and ``data: [DONE]``. A call
lives in a run step of type ``tool_calls``: each ``thread.run.step.delta`` carries
``delta.step_details.tool_calls[]`` entries keyed by ``index`` within the step; the first
entry at an index announces the call (``id``, ``type``, and ``function.name`` for a
``function`` call), and its ``function.arguments`` (a ``code_interpreter`` call's
``code_interpreter.input``: Python, not JSON) are fragments. Several steps may each number
their calls from 0, so each call gets a ``block`` in order of first appearance. A call ends
when its step does (``thread.run.step.completed``, ``.failed``, ``.cancelled``,
``.expired``: the step's whole ``tool_calls`` repeat the arguments), or when the run stops
or waits (``thread.run.requires_action``: its ``submit_tool_outputs.tool_calls`` repeat
them; ``.completed``, ``.incomplete``, ``.failed``, ``.cancelled``, ``.expired``), as the
SDK's ``AssistantEventHandler`` ends them. A call a completed step or a waiting run holds
that no delta announced (a stream resumed after ``submit_tool_outputs``) is announced there,
its whole arguments one fragment. A message (``thread.message.created``) is text; its
``thread.message.delta`` ``content[].text.value`` are text fragments. ``error`` is the
server's error. Without ``event:`` lines (a proxy that drops them) an event is named from
its object's ``object`` and ``status``.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    DONE,
    Ev,
    array,
    fragment_row,
    index,
    maybe_text,
    obj,
    stated_status,
    text,
)
from ..turns import Role, Script, Text, WireFrame
from ._identity import Identities
from .as_written import wire_lengths
from .recognise import ByType
from .spec import Envelope, Fields, WireFormat

OBJECTS = frozenset(("thread", "thread.run", "thread.run.step", "thread.run.step.delta",
                     "thread.message", "thread.message.delta"))
"""The ``object`` every payload of the stream names itself by (``error`` aside)."""
_RUN = ("queued", "in_progress", "requires_action", "cancelling", "cancelled", "failed",
        "completed", "incomplete", "expired")
_STEP = ("in_progress", "cancelled", "failed", "completed", "expired")
EVENTS = frozenset((
    "thread.created", "thread.run.created", *(f"thread.run.{s}" for s in _RUN),
    "thread.run.step.created", "thread.run.step.delta", *(f"thread.run.step.{s}" for s in _STEP),
    "thread.message.created", "thread.message.in_progress", "thread.message.delta",
    "thread.message.completed", "thread.message.incomplete", "error",
))
"""Every event the API streams (openai-python's ``AssistantStreamEvent``), ``done`` aside."""
_STEP_ENDS = frozenset(f"thread.run.step.{s}" for s in _STEP if s != "in_progress")
_RUN_ENDS = frozenset(f"thread.run.{s}" for s in ("completed", "incomplete", "failed",
                                                   "cancelled", "expired"))
_WAITS = "thread.run.requires_action"
_INPUT = {"function": ("function", "arguments"), "code_interpreter": ("code_interpreter", "input")}
"""A call's type -> the object and key holding its input text (``file_search`` has none)."""
_NO_INPUT = frozenset(("file_search",))
"""The documented call types that carry no input: any other type the API adds is a call
whose input this reader cannot know, and says so."""


def _unread(kind: str, typ: str) -> list[Ev]:
    """A problem row for a call of a type the reader does not know (its input, if any, is
    not read: not passed on as a call with no arguments in silence)."""
    if typ in _INPUT or typ in _NO_INPUT:
        return []
    return [Ev(kind, "other", problem=f"a tool call of type {typ[:40]!r}, which this reader "
                                      "does not know: its input is not read")]


def tool_of(typ: str, inner: dict[str, Any]) -> str | None:
    """A call's tool: a function's name, else its type (``code_interpreter``)."""
    return maybe_text(inner.get("name"), "function.name") if typ == "function" else typ


def _named(event: str, payload: dict[str, Any]) -> str:
    """The event's name: the SSE event's, or, where a proxy dropped it, one read from the
    payload's ``object`` and ``status`` (a created object is taken as it)."""
    if event in EVENTS:
        return event
    kind = payload.get("object")
    status = payload.get("status")
    if kind in ("thread.run.step.delta", "thread.message.delta"):
        return kind
    if kind == "thread":
        return "thread.created"
    if kind == "thread.message":
        return {"completed": "thread.message.completed",
                "incomplete": "thread.message.incomplete"}.get(status, "thread.message.created")
    if kind in ("thread.run", "thread.run.step") and status in (_RUN if kind == "thread.run"
                                                               else _STEP):
        return f"{kind}.{status}"
    return event


_WHY = (("incomplete_details", "reason"), ("last_error", "code"))
"""Where a run says why it stopped."""


class OpenAIAssistants:
    name = "openai-assistants"
    hot = None  # a call is keyed by its step and index: every frame goes through normalize
    sniff = ByType(OBJECTS, field="object")

    def __init__(self) -> None:
        self._blocks: dict[tuple[str, int], int] = {}  # (step id, index) -> block
        self._ids: dict[int, str | None] = {}  # block -> call id
        self._tools: dict[int, str | None] = {}  # block -> tool name
        self._open: list[tuple[str, int]] = []  # announced, not yet ended, in order
        self._who = Identities()  # each call's id and name as sent so far, by block

    def normalize(self, event: str, payload: Any, data: str) -> list[Ev]:
        payload = obj(payload, "an Assistants event")
        kind = _named(event, payload)
        if kind == "thread.run.step.delta":
            return self._delta(kind, payload, data)
        if kind == "thread.message.delta":
            return self._text(kind, payload, data)
        if kind in _STEP_ENDS:
            step = text(payload["id"], "id")
            details = payload.get("step_details")
            whole = (array(details.get("tool_calls") or [], "step_details.tool_calls")
                     if isinstance(details, dict) else [])
            return self._end(kind, [(step, i, obj(tc, "tool_calls[]"))
                                    for i, tc in enumerate(whole)], data, step) \
                or [Ev(kind, "other")]
        if kind == _WAITS:
            action = obj(payload.get("required_action") or {}, "required_action")
            submit = obj(action.get("submit_tool_outputs") or {}, "submit_tool_outputs")
            whole = array(submit.get("tool_calls") or [], "submit_tool_outputs.tool_calls")
            ends = self._end(kind, [(None, None, obj(tc, "tool_calls[]")) for tc in whole],
                             data, None)
            return [*ends, Ev(kind, "turn_stop", reason=stated_status(payload, *_WHY))]
        if kind in _RUN_ENDS:
            return [*self._end(kind, [], data, None),
                    Ev(kind, "turn_stop", reason=stated_status(payload, *_WHY))]
        if kind == "thread.message.created":
            return [Ev(kind, "text_start")]
        if kind == "error":  # documented as the error object; a nested one is read too
            err = payload["error"] if isinstance(payload.get("error"), dict) else payload
            return [Ev.provider_error(kind, err.get("message"), err.get("code"))]
        return [Ev(kind, "other")]  # runs and steps created or going on, messages done

    def _delta(self, kind: str, payload: dict[str, Any], data: str) -> list[Ev]:
        step = text(payload["id"], "id")
        details = obj(payload["delta"], "delta").get("step_details")
        if not isinstance(details, dict) or details.get("type") != "tool_calls":
            return [Ev(kind, "other")]  # a message creation step's delta
        calls = array(details.get("tool_calls") or [], "step_details.tool_calls")
        seen: dict[str, int] = {}  # an input key -> how many of its strings came before
        out: list[Ev] = []
        changes: list[Ev] = []  # after every other row (strict mode reads the last)
        for tc in calls:
            tc = obj(tc, "tool_calls[]")
            at = index(tc["index"], "tool_calls[].index")
            typ = text(tc["type"], "tool_calls[].type")
            cid = maybe_text(tc.get("id"), "tool_calls[].id")
            where, key = _INPUT.get(typ, (typ, None))
            inner = obj(tc.get(where) or {}, f"tool_calls[].{where}")
            tool = (maybe_text(inner.get("name"), "function.name") if typ == "function"
                    else typ)
            frag = maybe_text(inner.get(key), f"{where}.{key}") if key else None
            wire = None
            if frag is not None:
                n = seen[key] = seen.get(key, -1) + 1  # type: ignore[index]
                lengths = wire_lengths(data, key)  # type: ignore[arg-type]
                wire = lengths[n] if n < len(lengths) else None
            call = (step, at)
            block = self._blocks.get(call)
            if block is None:
                block = self._announce(call, cid, tool)
                out.append(Ev(kind, "call_start", block, cid, tool))
                out += _unread(kind, typ)
                if frag:
                    out.append(fragment_row(kind, "args_delta", block, frag, wire))
            else:  # a later entry at the index: an id or name it sends is late or a change
                changed = self._see(kind, block, cid, tool if typ == "function" else None)
                late = self._who.late("a later step delta")
                if frag is not None:
                    row = fragment_row(kind, "args_delta", block, frag, wire,
                                       None, *(() if changed is None else (cid, tool)))
                    out.append(row if late is None else row._replace(quirk=late))
                elif late is not None:
                    out.append(Ev(kind, "other", block, cid, tool, quirk=late))
                changes += [] if changed is None else [changed]
        return out + changes or [Ev(kind, "other")]

    def _see(self, kind: str, block: int, cid: str | None, tool: str | None) -> Ev | None:
        """An id or name sent again for the call at ``block``: the tracker's row if it
        changed; a late one becomes the call's."""
        if not (cid or tool):
            return None
        changed = self._who.see(kind, block, cid, tool, block)
        self._ids[block], self._tools[block] = self._who.known(block)
        return changed

    def _announce(self, call: tuple[str, int], cid: str | None, tool: str | None) -> int:
        block = self._blocks[call] = len(self._blocks)
        self._ids[block], self._tools[block] = cid, tool
        self._who.announce(block, cid, tool)
        self._open.append(call)
        return block

    def _end(self, kind: str, whole: list[tuple[str | None, int | None, dict[str, Any]]],
             data: str, step: str | None) -> list[Ev]:
        """The calls an event ends: those of ``step`` still open (every open call when
        ``step`` is None), each with its whole arguments where ``whole`` repeats them (found
        by the step's index, else by the call's id); a call ``whole`` holds that nothing
        announced is announced here, its arguments one fragment."""
        out: list[Ev] = []
        by_id = {self._ids[self._blocks[c]]: c for c in self._open}
        finals: dict[tuple[str, int], str | None] = {}
        lengths: dict[str, list[int]] = {}
        counted: dict[str, int] = {}
        changes: list[Ev] = []  # after every other row (strict mode reads the last)
        for at_step, at, tc in whole:
            typ = text(tc["type"], "tool_calls[].type")
            cid = maybe_text(tc.get("id"), "tool_calls[].id")
            where, key = _INPUT.get(typ, (typ, None))
            inner = obj(tc.get(where) or {}, f"tool_calls[].{where}")
            args = maybe_text(inner.get(key), f"{where}.{key}") if key else None
            wire = None
            if args is not None and key is not None:
                n = counted[key] = counted.get(key, -1) + 1
                if key not in lengths:  # once per frame (setdefault would scan it per call)
                    lengths[key] = wire_lengths(data, key)
                got = lengths[key]
                wire = got[n] if n < len(got) else None
            call = (at_step, at) if at_step is not None else by_id.get(cid)
            if call is None or call not in self._blocks:
                if call is None:
                    call = (f"\x00{cid}", len(self._blocks))  # named by its id alone
                tool = tool_of(typ, inner)
                block = self._announce(call, cid, tool)
                out.append(Ev(kind, "call_start", block, cid, tool))
                out += _unread(kind, typ)
                if args:
                    out.append(fragment_row(kind, "args_delta", block, args, wire))
            elif (row := self._see(kind, self._blocks[call], cid, tool_of(typ, inner))):
                changes.append(row)  # the repeated call names another id or name
            finals[call] = args
        ended = [c for c in self._open if step is None or c[0] == step]
        if ended:  # one pass, not a list.remove per call: linear in calls per step
            self._open = [c for c in self._open if not (step is None or c[0] == step)]
        for call in ended:
            block = self._blocks[call]
            out.append(Ev(kind, "block_stop", block, self._ids[block], self._tools[block],
                          final=finals.get(call)))
        return out + changes

    def _text(self, kind: str, payload: dict[str, Any], data: str) -> list[Ev]:
        parts = array(obj(payload["delta"], "delta").get("content") or [], "delta.content")
        values = []
        for part in parts:  # text parts; an image file or a refusal is none
            part = obj(part, "content[]")
            if part.get("type") == "text":
                value = obj(part.get("text") or {}, "content[].text").get("value")
                if value is not None:
                    values.append(text(value, "text.value"))
        lengths = wire_lengths(data, "value") if values else []
        return [fragment_row(kind, "text_delta", None, v,
                             lengths[n] if n < len(lengths) else None)
                for n, v in enumerate(values)] or [Ev(kind, "other")]


# -- writing a turn ------------------------------------------------------------------------
def write(turn: Script) -> list[WireFrame]:
    """A turn as a run streams it: the run created, queued and in progress; each text
    segment a ``message_creation`` step (its message created, one ``thread.message.delta``
    a fragment, completed); each run of calls one ``tool_calls`` step (each call announced
    by its first delta with an empty ``arguments``, then one delta a fragment). A step of
    calls that the turn goes on after is completed (its whole calls repeated); the last
    one leaves the run waiting (``thread.run.requires_action``, its calls repeated); a turn
    that ends in text completes the run. Then ``event: done`` and ``data: [DONE]``."""
    model = turn.style.model if turn.style else turn.model
    ids = {"thread_id": "thread_lab", "assistant_id": "asst_lab"}
    run = {"id": "run_lab", "object": "thread.run", "created_at": 0, **ids, "status": "queued",
           "model": model, "instructions": "", "tools": []}
    frames: list[WireFrame] = []

    def add(event: str, payload: Any, role: Role = "other", n: int | None = None,
            fragment: str | None = None, block: int | None = None) -> None:
        frames.append(WireFrame(payload, event, role, n, fragment, block))

    add("thread.run.created", run, "head")
    add("thread.run.queued", run)
    run = {**run, "status": "in_progress"}
    add("thread.run.in_progress", run)
    steps = 0
    calls = 0
    open_step: tuple[dict[str, Any], list[dict[str, Any]]] | None = None

    def step(kind: str, details: dict[str, Any], status: str = "in_progress") -> dict[str, Any]:
        return {"id": f"step_lab{steps}", "object": "thread.run.step", "created_at": 0,
                "run_id": run["id"], **ids, "type": kind, "status": status,
                "step_details": details}

    def close_step() -> None:
        nonlocal open_step
        if open_step is not None:
            head, whole = open_step
            add("thread.run.step.completed", {**head, "status": "completed", "step_details": {
                "type": "tool_calls", "tool_calls": whole}}, "call_stop")
            open_step = None

    for n, seg in enumerate(turn.segments):
        if isinstance(seg, Text):
            close_step()
            message = f"msg_lab{n}"
            head = step("message_creation", {"type": "message_creation",
                                             "message_creation": {"message_id": message}})
            steps += 1
            add("thread.run.step.created", head)
            msg = {"id": message, "object": "thread.message", "created_at": 0, **ids,
                   "run_id": run["id"], "status": "in_progress", "role": "assistant",
                   "content": []}
            add("thread.message.created", msg, "text_start", n)
            for piece in seg.fragments:
                add("thread.message.delta", {"id": message, "object": "thread.message.delta",
                                             "delta": {"content": [{"index": 0, "type": "text",
                                                                    "text": {"value": piece}}]}},
                    "text", n, piece)
            add("thread.message.completed", {**msg, "status": "completed", "content": [
                {"type": "text", "text": {"value": "".join(seg.fragments),
                                          "annotations": []}}]}, "text_stop", n)
            add("thread.run.step.completed", {**head, "status": "completed"})
            continue
        if open_step is None:
            open_step = step("tool_calls", {"type": "tool_calls", "tool_calls": []}), []
            steps += 1
            add("thread.run.step.created", open_step[0])
        head, whole = open_step
        at = len(whole)

        def delta(entry: dict[str, Any], head: dict[str, Any] = head) -> dict[str, Any]:
            return {"id": head["id"], "object": "thread.run.step.delta", "delta": {
                "step_details": {"type": "tool_calls", "tool_calls": [entry]}}}

        add("thread.run.step.delta", delta({"index": at, "id": seg.call_id, "type": "function",
                                            "function": {"name": seg.tool, "arguments": "",
                                                         "output": None}}),
            "call_start", n, block=calls)
        for piece in seg.fragments:
            add("thread.run.step.delta", delta({"index": at, "type": "function",
                                                "function": {"arguments": piece}}),
                "args", n, piece, calls)
        whole.append({"id": seg.call_id, "type": "function",
                      "function": {"name": seg.tool, "arguments": seg.args, "output": None}})
        calls += 1
    if open_step is not None:
        waiting = [{**c, "function": {"name": c["function"]["name"],
                                      "arguments": c["function"]["arguments"]}}
                   for c in open_step[1]]  # (no output yet: the run waits for it)
        add(_WAITS, {**run, "status": "requires_action", "required_action": {
            "type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": waiting}}},
            "finish")
    else:
        add("thread.run.completed", {**run, "status": "completed"}, "finish")
    add("done", DONE, "end")
    return frames


FORMAT = WireFormat.of(
    OpenAIAssistants,
    docs="https://platform.openai.com/docs/api-reference/assistants-streaming/events",
    path="/v1/threads/runs",
    events={
        "call_start": ("thread.run.step.delta", *sorted(_STEP_ENDS), _WAITS),
        "args_delta": ("thread.run.step.delta", *sorted(_STEP_ENDS), _WAITS),
        "block_stop": (*sorted(_STEP_ENDS), _WAITS, *sorted(_RUN_ENDS)),
        "text_start": ("thread.message.created",),
        "text_delta": ("thread.message.delta",),
        "turn_stop": (_WAITS, *sorted(_RUN_ENDS), "[DONE]"),
        "error": ("error",),
        "other": tuple(sorted(EVENTS - {"thread.message.created", "error", *_RUN_ENDS,
                                        _WAITS})),
    },
    fields=Fields(call_id=("id",), tool=("name",), fragment=("arguments", "input"),
                  whole=("arguments", "input"), text=("value",)),
    envelope=Envelope(
        containers=frozenset(("delta", "step_details", "tool_calls", "function",
                              "code_interpreter", "required_action", "submit_tool_outputs",
                              "message_creation", "last_error", "incomplete_details",
                              "usage", "error", "content", "text")),
        schema=frozenset(("type", "object", "status", "role", "name", "model")),
        numbers=frozenset(("index", "created_at", "completed_at", "started_at",
                           "expires_at", "failed_at", "cancelled_at", "expired_at")),
        ids=frozenset(("id", "thread_id", "run_id", "assistant_id", "message_id")),
    ),
    write=write,
    quirks=dict.fromkeys(("empty_arguments", "call_in_text", "invalid_arguments",
                          "line_separator_in_data")),  # in what is said: the writer's as is
)
