"""OpenAI Assistants run streams: what each event means (the contract every format shares is
in ``test_formats.py``). Streams written from the API reference's streaming events and
openai-python's types (``openai.types.beta.threads.runs``), and read back by the SDK's own
``AssistantEventHandler`` over an in-memory transport."""

from __future__ import annotations

import warnings

import httpx2
import pytest

import streamcalls_lab as scl
from streamcalls_lab.turns import Call, Script, Text, body, write

from ..support.assistants_turns import WEATHER, asst, delta, fn, run, step, waiting, whole
from ..support.wire_samples import (
    assert_chunking_changes_nothing,
    assert_refused,
    call_triples,
    rows_of,
)


def test_calls_of_one_step_are_kept_apart_by_index_and_ended_by_the_step() -> None:
    body_ = asst(step("step_1"),
                 delta("step_1", fn(0, "", "call_a", "f"), fn(1, "[2", "call_b", "g")),
                 delta("step_1", fn(0, "[1"), fn(1, "]")),
                 delta("step_1", fn(0, "]")),
                 step("step_1", "completed", [whole("call_a", "f", "[1]"),
                                              whole("call_b", "g", "[2]")], "completed"),
                 run("completed"))
    table = scl.calls(body_)
    assert list(zip(table.call_id, table.block, table.args, strict=True)) == [
        ("call_a", 0, "[1]"), ("call_b", 1, "[2]")]
    assert table.complete.all() and table.final_matches.all()
    assert scl.load(body_).wire_chars.dropna().tolist() == [2, 2, 1, 1]


def test_each_steps_calls_get_blocks_of_their_own() -> None:
    """Two steps each number their calls from index 0: two calls, not one."""
    body_ = asst(step("step_1"), delta("step_1", fn(0, "{}", "call_a", "f")),
                 step("step_1", "completed", [whole("call_a", "f", "{}")], "completed"),
                 step("step_2"), delta("step_2", fn(0, '{"x":1}', "call_b", "g")),
                 waiting(whole("call_b", "g", '{"x":1}')))
    table = scl.calls(body_)
    assert list(zip(table.block, table.call_id, table.args, strict=True)) == [
        (0, "call_a", "{}"), (1, "call_b", '{"x":1}')]


def test_a_step_completed_ends_only_its_own_calls() -> None:
    body_ = asst(step("step_1"), delta("step_1", fn(0, "{", "call_a", "f")),
                 step("step_2"), delta("step_2", fn(0, "{", "call_b", "g")),
                 step("step_1", "completed", [whole("call_a", "f", "{}")], "completed"))
    table = scl.calls(body_, strict=False)
    assert table.complete.tolist() == [True, False]


def test_code_interpreter_and_file_search_calls_are_calls_named_by_their_type() -> None:
    body_ = asst(
        step("step_1"),
        delta("step_1", {"index": 0, "id": "call_ci", "type": "code_interpreter",
                         "code_interpreter": {"input": "", "outputs": []}}),
        delta("step_1", {"index": 0, "type": "code_interpreter",
                         "code_interpreter": {"input": "print(1"}}),
        delta("step_1", {"index": 0, "type": "code_interpreter",
                         "code_interpreter": {"input": "+1)"}}),
        delta("step_1", {"index": 0, "type": "code_interpreter", "code_interpreter": {
            "outputs": [{"index": 0, "type": "logs", "logs": "2\n"}]}}),
        delta("step_1", {"index": 1, "id": "call_fs", "type": "file_search", "file_search": {}}),
        step("step_1", "completed", [
            {"id": "call_ci", "type": "code_interpreter", "code_interpreter": {
                "input": "print(1+1)", "outputs": [{"type": "logs", "logs": "2\n"}]}},
            {"id": "call_fs", "type": "file_search", "file_search": {}}], "completed"),
        run("completed"))
    table = scl.calls(body_)
    assert list(zip(table.call_id, table.tool, table.args, table.complete, strict=True)) == [
        ("call_ci", "code_interpreter", "print(1+1)", True), ("call_fs", "file_search", "", True)]
    assert table.final_matches.tolist()[0] is True


def test_a_call_of_a_type_the_reader_does_not_know_is_a_problem_not_a_call_without_input() -> None:
    body_ = asst(
        step("step_1"),
        delta("step_1", {"index": 0, "id": "call_cu", "type": "computer",
                         "computer": {"action": {"type": "click", "x": 1, "y": 2}}}),
        step("step_1", "completed", [{"id": "call_cu", "type": "computer", "computer": {
            "action": {"type": "click", "x": 1, "y": 2}}}], "completed"),
        run("completed"))
    # a row that says so, strict or not, as for a Bedrock chunk of a family it does not read
    for strict in (True, False):
        row = scl.load(body_, strict=strict).query("problem.notna()").iloc[0]
        assert row.kind == "other" and "type 'computer'" in row.problem


def test_message_deltas_are_text() -> None:
    message = {"id": "msg_1", "object": "thread.message", "status": "in_progress",
               "role": "assistant", "content": []}
    body_ = asst(("thread.message.created", message),
                 *[("thread.message.delta", {"id": "msg_1", "object": "thread.message.delta",
                                             "delta": {"content": [{"index": 0, "type": "text",
                                                                    "text": {"value": v}}]}})
                   for v in ("It is ", "sunny \"now\".")],
                 ("thread.message.completed", {**message, "status": "completed"}),
                 run("completed"))
    df = scl.load(body_)
    assert df.kind.astype(str).tolist()[:3] == ["text_start", "text_delta", "text_delta"]
    assert "".join(df.fragment.dropna()) == 'It is sunny "now".'
    assert df.wire_chars.dropna().tolist() == [6, 14]


@pytest.mark.parametrize(("event", "reason"), [
    (run("completed"), "completed"),
    (run("incomplete", incomplete_details={"reason": "max_completion_tokens"}),
     "incomplete: max_completion_tokens"),
    (run("failed", last_error={"code": "server_error", "message": "x"}), "failed: server_error"),
])
def test_a_run_that_stops_says_why_and_ends_its_open_calls(event: tuple, reason: str) -> None:
    body_ = asst(step("step_1"), delta("step_1", fn(0, "{}", "call_a", "f")), event)
    df = scl.load(body_)
    assert df.reason.dropna().tolist() == [reason]
    assert scl.calls(body_).complete.all()


def test_an_error_event_is_the_servers_error() -> None:
    df = scl.load(asst(run("created"), ("error", {"code": "server_error", "message": "boom"}),
                       done=False))
    assert df.problem[df.kind == "error"].tolist() == ["provider error: server_error: boom"]


def test_without_event_lines_events_are_named_from_their_objects() -> None:
    events = (run("created"), step("step_1"), delta("step_1", fn(0, "", "call_1", "f")),
              delta("step_1", fn(0, '{"a":1}')), waiting(whole("call_1", "f", '{"a":1}')))
    named, bare = rows_of(asst(*events)), rows_of(asst(*events, named=False))
    assert [r[1:] for r in bare] == [r[1:] for r in named]
    assert [r[0] for r in bare][:2] == ["thread.run.queued", "thread.run.step.in_progress"]
    assert call_triples(scl.calls(asst(*events, named=False))) == [("call_1", "f", '{"a":1}')]


def test_a_call_no_delta_announced_is_read_from_the_event_that_ends_it() -> None:
    """A stream resumed after submit_tool_outputs: the step's calls arrive whole."""
    body_ = asst(run("queued"), step("step_1", "completed", [whole("call_1", "f", '{"a":1}')],
                                     "completed"), run("completed"))
    table = scl.calls(body_)
    assert call_triples(table) == [("call_1", "f", '{"a":1}')] and table.complete.all()


@pytest.mark.parametrize(("entry", "why"), [
    (fn(0, 5), "function.arguments should be a string"),
    ({"index": "0", "type": "function", "function": {"arguments": "{}"}},
     "tool_calls\\[\\].index should be an integer"),
])
def test_a_field_of_the_wrong_type_is_reported(entry: dict, why: str) -> None:
    body_ = asst(step("step_1"), delta("step_1", entry))
    assert_refused(body_, why)


def test_an_assistants_stream_is_not_read_as_chat_for_its_done() -> None:
    assert set(scl.load(WEATHER).provider) == {"openai-assistants"}


@pytest.mark.parametrize("stream", [WEATHER, asst(
    step("step_1"), delta("step_1", fn(0, "", "call_a", "f"), fn(1, "[2", "call_b", "g")),
    delta("step_1", fn(0, "[1]"), fn(1, "]")), waiting())])
def test_documented_streams_read_the_same_in_any_chunking(stream: bytes) -> None:
    assert_chunking_changes_nothing(stream)


# -- the SDK's own reader ------------------------------------------------------------------
def sdk_calls(raw: bytes) -> list[tuple]:
    """The calls openai-python's AssistantEventHandler hands on (on_tool_call_done)."""
    import openai
    from openai import AssistantEventHandler

    def serve(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=raw)

    done: dict[str, tuple] = {}  # (it says a call is done at its step's end and the run's)

    class Handler(AssistantEventHandler):
        def on_tool_call_done(self, tool_call: object) -> None:
            f = tool_call.function  # type: ignore[attr-defined]
            done[tool_call.id] = (tool_call.id, f.name, f.arguments)  # type: ignore[attr-defined]

    client = openai.OpenAI(api_key="sk-fake", base_url="http://sdk-reference.invalid",
                           http_client=httpx2.Client(transport=httpx2.MockTransport(serve)),
                           max_retries=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with client, client.beta.threads.runs.stream(
                thread_id="thread_1", assistant_id="asst_1", event_handler=Handler()) as s:
            s.until_done()
    return list(done.values())


TURNS = {
    "prose and two calls": Script((Text(("Let me ", "check.")),
                                   Call("get_weather", "call_1", ('{"city": "Mont', 'réal"}')),
                                   Call("get_time", "call_2", ('{"tz":', ' "UTC"}')))),
    "a call, then prose": Script((Call("f", "call_1", ("{}",)), Text(("Done.",)))),
}


@pytest.mark.parametrize("name", TURNS)
def test_the_sdk_reads_the_calls_the_kit_reads_from_a_written_turn(name: str) -> None:
    raw = body("openai-assistants", write("openai-assistants", TURNS[name]))
    assert sdk_calls(raw) == call_triples(scl.calls(raw))
    assert sdk_calls(raw) == [(c.call_id, c.tool, c.args) for c in TURNS[name].calls]


def test_the_sdk_reads_the_calls_the_kit_reads_from_a_documented_stream() -> None:
    assert sdk_calls(WEATHER) == call_triples(scl.calls(WEATHER)) == [
        ("call_1", "get_weather", '{"city":"Paris"}')]


def test_a_lone_step_delta_is_read_not_named_unknown() -> None:
    """What the diagnosis of unknown streams once named "the OpenAI Assistants API"."""
    lone = asst(("thread.run.step.delta", {"id": "step_1", "object": "thread.run.step.delta",
                                           "delta": {"step_details": {}}}), done=False)
    df = scl.load(lone)
    assert set(df.provider) == {"openai-assistants"} and df.problem.isna().all()


def test_a_message_delta_of_an_image_or_an_annotation_alone_is_not_text() -> None:
    parts = [{"index": 0, "type": "image_file", "image_file": {"file_id": "file_1"}},
             {"index": 1, "type": "text", "text": {"annotations": [{"type": "file_citation",
                                                                    "text": "[1]"}]}}]
    df = scl.load(asst(("thread.message.delta", {
        "id": "msg_1", "object": "thread.message.delta", "delta": {"content": parts}})))
    assert df.kind.astype(str).tolist() == ["other", "turn_stop"]
