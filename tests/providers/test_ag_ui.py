"""AG-UI: what each event means (the contract every format shares is in ``test_formats.py``).
Streams written from ``@ag-ui/core``'s event schemas, the client's chunk expansion
(``transformChunks``) and the Python ``EventEncoder``'s framing."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl

from ..support.agui_turns import RUN, agui
from ..support.wire_samples import KEPT_APART, assert_refused, finished_calls, interleaved


def test_calls_open_at_once_are_kept_apart_by_id() -> None:
    body = agui(*interleaved(
        lambda i, tool: {"type": "TOOL_CALL_START", "toolCallId": i, "toolCallName": tool},
        lambda i, piece: {"type": "TOOL_CALL_ARGS", "toolCallId": i, "delta": piece},
        lambda i, tool, args: {"type": "TOOL_CALL_END", "toolCallId": i},
    ), {"type": "RUN_FINISHED", **RUN})
    assert finished_calls(body) == KEPT_APART


def test_a_chunked_call_the_stream_never_ends_stays_unfinished() -> None:
    body = agui({"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f",
                 "delta": '{"x":'})
    assert not scl.calls(body).complete.any()


def test_a_run_error_is_the_servers_error() -> None:
    df = scl.load(agui({"type": "RUN_STARTED", **RUN},
                       {"type": "RUN_ERROR", "message": "boom", "code": "TOOL_ERROR"}))
    assert df.problem[df.kind == "error"].tolist() == ["provider error: TOOL_ERROR: boom"]


@pytest.mark.parametrize(("event", "why"), [
    ({"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": 5}, "delta should be a string"),
    ({"type": "TOOL_CALL_START", "toolCallId": None, "toolCallName": "f"},
     "toolCallId should be a string"),
    ({"type": "TOOL_CALL_CHUNK", "delta": "{}"}, "the first chunk of a call should carry"),
])
def test_a_field_of_the_wrong_type_is_reported(event: dict, why: str) -> None:
    body = agui({"type": "RUN_STARTED", **RUN}, event)
    assert_refused(body, why)


def test_a_problem_event_ends_no_chunked_call() -> None:
    body = agui({"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f"},
                {"type": "TOOL_CALL_ARGS", "toolCallId": 1, "delta": "x"},
                {"type": "TOOL_CALL_CHUNK", "delta": "{}"},
                {"type": "RUN_FINISHED", **RUN})
    table = scl.calls(body, strict=False)
    assert (table.args.tolist(), table.complete.tolist()) == (["{}"], [True])
