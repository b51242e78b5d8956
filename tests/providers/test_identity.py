"""A call's identity that arrives late or changes, in every reader where an event after the
announcement repeats it (issue #29): a late value is the call's; a changed one keeps the
first, and is a problem row in ``calls()``, an ``identity_changed`` anomaly and, in strict
mode, a ``CaptureError`` naming the file, the changing event's byte offset and both values.
Each capture is written from the format's documented events (the readers' own tests build
them the same way)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

import streamcalls_lab as scl

from ..support import agui_turns as agui
from ..support import assistants_turns as asst
from ..support import mistral_turns as mistral
from ..support import realtime_turns as rt
from ..support import ui_stream_turns as aiui


class Case(NamedTuple):
    write: Callable[[str, str], bytes]
    """The capture, given the value the event after the announcement sends (the same, or
    another) for the field it repeats."""
    field: str  # the calls() column that field is
    first: str  # the announcement's value
    at: bytes  # the bytes the changing event's frame starts with (its offset)


def _realtime_item_done(field: str) -> Callable[[str, str], bytes]:
    def write(value: str, _: str) -> bytes:
        key = "call_id" if field == "call_id" else "name"
        return rt.lines(rt.SESSION, rt.added(1, rt.fn(name="f")), rt.delta(2, "{}"),
                        rt.ev("response.output_item.done", 3, response_id="resp_1",
                              output_index=0, item=rt.fn(**{"name": "f", "arguments": "{}",
                                                            "status": "completed",
                                                            key: value})),
                        rt.done(4))
    return write


def _realtime_args_done(value: str, _: str) -> bytes:
    return rt.lines(rt.SESSION, rt.added(1, rt.fn(name="f")), rt.delta(2, "{}"),
                    rt.ev("response.function_call_arguments.done", 3, response_id="resp_1",
                          item_id="item_1", output_index=0, call_id=value, arguments="{}"),
                    rt.done(4))


def _realtime_response_done(value: str, _: str) -> bytes:
    item = rt.fn(name="f", arguments="{}", status="completed")
    return rt.lines(rt.SESSION, rt.added(1, rt.fn(name="f")), rt.delta(2, "{}"),
                    rt.ev("response.output_item.done", 3, response_id="resp_1",
                          output_index=0, item=item),
                    rt.done(4, output=[{**item, "name": value}]))


def _mistral_delta(value: str, _: str) -> bytes:
    return mistral.mistral(mistral.fc("{", name="f"), mistral.fc("}", name=value),
                           {"type": "conversation.response.done", "usage": {}})


def _mistral_tool_done(value: str, _: str) -> bytes:
    started = {"type": "tool.execution.started", "output_index": 0, "id": "tool_1",
               "name": "web_search", "arguments": "{}"}
    return mistral.mistral(started, {"type": "tool.execution.done", "output_index": 0,
                                     "id": "tool_1", "name": value, "info": {}},
                           {"type": "conversation.response.done", "usage": {}})


def _ai_sdk_ui(value: str, _: str) -> bytes:
    return aiui.ui({"type": "start"}, {"type": "tool-input-start", "toolCallId": "c1",
                                       "toolName": "f"},
                   {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{}"},
                   {"type": "tool-input-available", "toolCallId": "c1", "toolName": value,
                    "input": {}},
                   {"type": "finish"})


def _ag_ui(value: str, _: str) -> bytes:
    return agui.agui({"type": "RUN_STARTED", **agui.RUN},
                     {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f",
                      "delta": "{"},
                     {"type": "TOOL_CALL_CHUNK", "toolCallName": value, "delta": "}"},
                     {"type": "RUN_FINISHED", **agui.RUN})


def _assistants_delta(value: str, _: str) -> bytes:
    return asst.asst(asst.run("created"), asst.step("step_1"),
                     asst.delta("step_1", asst.fn(0, "{", "call_1", "f")),
                     asst.delta("step_1", {"index": 0, "type": "function",
                                           "function": {"name": value, "arguments": "}"}}),
                     asst.waiting(asst.whole("call_1", "f", "{}")))


def _assistants_step_done(value: str, _: str) -> bytes:
    return asst.asst(asst.run("created"), asst.step("step_1"),
                     asst.delta("step_1", asst.fn(0, "{}", "call_1", "f")),
                     asst.step("step_1", "completed", [asst.whole("call_1", value, "{}")],
                               event="completed"),
                     asst.run("completed"))


CASES = {
    "realtime output_item.done call_id": Case(_realtime_item_done("call_id"), "call_id",
                                              "call_1", b'{"type":"response.output_item.done'),
    "realtime output_item.done name": Case(_realtime_item_done("tool"), "tool", "f",
                                           b'{"type":"response.output_item.done'),
    "realtime arguments.done call_id": Case(_realtime_args_done, "call_id", "call_1",
                                            b'{"type":"response.function_call_arguments.done'),
    "realtime response.done name": Case(_realtime_response_done, "tool", "f",
                                        b'{"type":"response.done'),
    "mistral function.call.delta name": Case(_mistral_delta, "tool", "f",
                                             b'event: function.call.delta\ndata: {"type":'
                                             b'"function.call.delta","output_index":1,"id":'
                                             b'"fc_1","name":"'),  # the 2nd (_offset)
    "mistral tool.execution.done name": Case(_mistral_tool_done, "tool", "web_search",
                                             b"event: tool.execution.done"),
    "ai-sdk-ui tool-input-available toolName": Case(_ai_sdk_ui, "tool", "f",
                                                    b'data: {"type":"tool-input-available'),
    "ag-ui TOOL_CALL_CHUNK toolCallName": Case(_ag_ui, "tool", "f",
                                               b'data: {"type":"TOOL_CALL_CHUNK",'
                                               b'"toolCallName"'),
    "assistants later delta name": Case(_assistants_delta, "tool", "f",
                                        b'event: thread.run.step.delta\ndata: {"id": '
                                        b'"step_1", "object": "thread.run.step.delta", '
                                        b'"delta": {"step_details": {"type": "tool_calls", '
                                        b'"tool_calls": [{"index": 0, "type": "function", '
                                        b'"function": {"name"'),
    "assistants step.completed name": Case(_assistants_step_done, "tool", "f",
                                           b"event: thread.run.step.completed"),
}


def _offset(body: bytes, case: Case) -> int:
    """Where the changing event's frame starts: the last frame that starts so (a Mistral
    delta that changes the name is the second of two that start alike)."""
    return body.rindex(case.at)


@pytest.mark.parametrize("name", CASES)
def test_the_same_value_repeated_is_no_problem(name: str) -> None:
    case = CASES[name]
    body = case.write(case.first, case.first)
    table = scl.calls(body)
    assert table[case.field].tolist() == [case.first] and table.problem.isna().all()
    assert "identity_changed" not in set(scl.anomalies(scl.load(body)).anomaly)


@pytest.mark.parametrize("name", CASES)
def test_a_changed_value_keeps_the_first_and_is_named_everywhere(name: str,
                                                                 tmp_path: Path) -> None:
    case = CASES[name]
    other = case.first + "_changed"
    body = case.write(other, case.first)
    path = tmp_path / "turn.sse"
    path.write_bytes(body)
    both = f"{case.first!r} then {other!r}"
    with pytest.raises(scl.CaptureError) as e:
        scl.load(path)
    assert e.value.offset == _offset(body, case), name
    assert str(e.value).startswith(f"turn: byte {e.value.offset}: ") and both in str(e.value)
    rows = scl.load(path, strict=False)
    table = scl.calls(rows)
    assert table[case.field].tolist() == [case.first]
    assert both in table.problem[0] and table.problem[0].count("identity_changed") == 1
    found = scl.anomalies(rows)
    assert "identity_changed" in set(found.anomaly)
    detail = found.loc[found.anomaly == "identity_changed", "detail"].iloc[0]
    assert both in detail and f"the other at byte {e.value.offset}" in detail


# -- late identity: a value the announcement left out, sent on a later event ---------------
def _realtime_late_call_id() -> bytes:
    item = {k: v for k, v in rt.fn(name="f").items() if k != "call_id"}
    return rt.lines(rt.SESSION, rt.added(1, item), rt.delta(2, "{}", call_id="call_9"),
                    rt.ev("response.output_item.done", 3, response_id="resp_1",
                          output_index=0, item={**item, "arguments": "{}"}), rt.done(4))


def _assistants_late_name() -> bytes:
    return asst.asst(asst.run("created"), asst.step("step_1"),
                     asst.delta("step_1", {"index": 0, "type": "function", "id": "call_1",
                                           "function": {"arguments": ""}}),
                     asst.delta("step_1", {"index": 0, "type": "function",
                                           "function": {"name": "f", "arguments": "{}"}}),
                     asst.run("completed"))


@pytest.mark.parametrize(("write", "field", "value"), [
    (_realtime_late_call_id, "call_id", "call_9"),
    (_assistants_late_name, "tool", "f"),
])
def test_a_late_value_is_the_calls_and_noted(write: Callable[[], bytes], field: str,
                                             value: str) -> None:
    body = write()
    table = scl.calls(body)
    assert table[field].tolist() == [value] and table.problem.isna().all()
    assert "late_identity" in set(scl.anomalies(scl.load(body)).anomaly)
