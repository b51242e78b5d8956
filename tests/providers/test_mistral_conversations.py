"""Mistral Conversations: what each event means (the contract every format shares is in
``test_formats.py``). Streams written from the API reference and mistralai's event models
(``SSETypes``, ``FunctionCallEvent``, ``MessageOutputEvent``, ``ToolExecution*Event``)."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl

from ..support.mistral_turns import DONE, STARTED, WEATHER, fc, mistral, say
from ..support.wire_samples import (
    assert_chunking_changes_nothing,
    assert_refused,
    call_triples,
    finished_calls,
    rows_of,
)


def test_the_name_repeated_on_every_delta_is_the_same_call() -> None:
    table = scl.calls(WEATHER)
    assert table.tool.tolist() == ["get_weather"] and len(table) == 1


def test_a_call_is_unfinished_until_the_response_is_done() -> None:
    table = scl.calls(mistral(STARTED, fc('{"city"'), fc(':"Paris"}')), strict=False)
    assert table.args.tolist() == ['{"city":"Paris"}'] and not table.complete.any()


def test_parallel_calls_are_kept_apart_by_tool_call_id() -> None:
    body = mistral(STARTED, fc("[1", "aaaaaaaaa", "f", "fc_1", 0),
                   fc("[2", "bbbbbbbbb", "g", "fc_2", 1), fc("]", "aaaaaaaaa", "f", "fc_1", 0),
                   fc("]", "bbbbbbbbb", "g", "fc_2", 1), DONE)
    assert finished_calls(body, "call_id", "block", "tool", "args") == [
        ("aaaaaaaaa", 0, "f", "[1]"), ("bbbbbbbbb", 1, "g", "[2]")]


def test_text_chunks_are_text_and_thinking_is_not() -> None:
    body = mistral(STARTED, say({"type": "thinking", "thinking": [{"type": "text",
                                                                   "text": "hmm"}]}),
                   say({"type": "text", "text": "It is \"sunny\"."}), DONE)
    df = scl.load(body)
    assert df.kind.astype(str).tolist() == ["other", "other", "text_delta", "turn_stop"]
    assert df.fragment.dropna().tolist() == ['It is "sunny".']
    assert df.wire_chars.dropna().tolist() == [16]


def test_a_server_run_tool_is_a_call_from_its_start_to_its_done() -> None:
    body = mistral(STARTED,
                   {"type": "tool.execution.started", "output_index": 0, "id": "tool_1",
                    "name": "web_search", "arguments": '{"query":'},
                   {"type": "tool.execution.delta", "output_index": 0, "id": "tool_1",
                    "name": "web_search", "arguments": '"Paris"}'},
                   {"type": "tool.execution.done", "output_index": 0, "id": "tool_1",
                    "name": "web_search", "info": {}},
                   say("Found it.", 1), DONE)
    table = scl.calls(body)
    assert call_triples(table) == [("tool_1", "web_search", '{"query":"Paris"}')]
    assert table.complete.all()
    assert scl.load(body).event[scl.load(body).kind == "block_stop"].tolist() == [
        "tool.execution.done"]


def test_a_response_error_is_the_servers_error() -> None:
    df = scl.load(mistral(STARTED, {"type": "conversation.response.error",
                                    "message": "Rate limit exceeded", "code": 1300}))
    assert df.problem[df.kind == "error"].tolist() == [
        "provider error: 1300: Rate limit exceeded"]


def test_events_read_the_same_without_event_lines() -> None:
    assert rows_of(mistral(STARTED, fc("{}"), DONE, named=False)) == rows_of(
        mistral(STARTED, fc("{}"), DONE))


@pytest.mark.parametrize(("event", "why"), [
    (fc(5), "arguments should be a string"),
    ({**fc("{}"), "tool_call_id": None}, "tool_call_id should be a string"),
    ({**fc("{}"), "name": 3}, "name should be a string"),
])
def test_a_field_of_the_wrong_type_is_reported(event: dict, why: str) -> None:
    body = mistral(STARTED, event)
    assert_refused(body, why)


def test_it_is_not_read_as_any_other_format() -> None:
    assert set(scl.load(WEATHER).provider) == {"mistral-conversations"}


def test_a_documented_stream_reads_the_same_in_any_chunking() -> None:
    assert_chunking_changes_nothing(WEATHER)
