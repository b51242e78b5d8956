"""OpenAI Assistants test turns: run-step events as the API frames them, and the documented
weather turn."""

from __future__ import annotations

import json

IDS = {"thread_id": "thread_1", "assistant_id": "asst_1"}


RUN = {"id": "run_1", "object": "thread.run", "created_at": 1, **IDS}


def asst(*events: tuple[str, dict], named: bool = True, done: bool = True) -> bytes:
    """Events as the API frames them: ``event: <name>`` then ``data: <json>``, and
    ``event: done`` / ``data: [DONE]`` last (``named=False``: a proxy dropped the names)."""
    out = [f"{'event: ' + e + chr(10) if named else ''}data: {json.dumps(p)}\n\n"
           for e, p in events]
    if done:
        out.append("event: done\ndata: [DONE]\n\n")
    return "".join(out).encode()


def run(event: str, **more: object) -> tuple[str, dict]:
    """A run event; the run's status is the event's, but ``queued`` when it is created."""
    status = "queued" if event == "created" else event
    return f"thread.run.{event}", {**RUN, "status": status, **more}


def step(sid: str, status: str = "in_progress", calls: list | None = None,
         event: str = "created") -> tuple[str, dict]:
    return f"thread.run.step.{event}", {
        "id": sid, "object": "thread.run.step", "run_id": "run_1", **IDS, "type": "tool_calls",
        "status": status, "step_details": {"type": "tool_calls", "tool_calls": calls or []}}


def delta(sid: str, *tool_calls: dict) -> tuple[str, dict]:
    return "thread.run.step.delta", {"id": sid, "object": "thread.run.step.delta", "delta": {
        "step_details": {"type": "tool_calls", "tool_calls": list(tool_calls)}}}


def fn(index: int, arguments: str, call_id: str | None = None,
       name: str | None = None) -> dict:
    """A function tool call delta: the first names the call, the rest carry fragments."""
    entry: dict = {"index": index, "type": "function", "function": {"arguments": arguments}}
    if call_id is not None:
        entry["id"] = call_id
        entry["function"] = {"name": name, "arguments": arguments, "output": None}
    return entry


def whole(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments, "output": None}}


def waiting(*calls: dict) -> tuple[str, dict]:
    return run("requires_action", required_action={
        "type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": list(calls)}})


WEATHER = asst(
    run("created"), run("queued"), run("in_progress"),
    step("step_1"),
    delta("step_1", fn(0, "", "call_1", "get_weather")),
    delta("step_1", fn(0, '{"city":')),
    delta("step_1", fn(0, '"Paris"}')),
    waiting(whole("call_1", "get_weather", '{"city":"Paris"}')),
)
