"""calls(): one row per call, args byte-exact, completion only from the stop event."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import streamcalls_lab as scl

from .support.sse_turns import (
    ADDED,
    ANNOUNCE,
    START,
    TOOL,
    anthropic,
    arg,
    args_delta,
    chat,
    responses,
)

STOP = {"type": "content_block_stop", "index": 1}


def test_args_are_the_fragments_joined_byte_exact() -> None:
    pieces = ['{"summary": "urgent request', " from ops", ' \\u00e9\\n"}']
    table = scl.calls(anthropic(START, TOOL, *map(args_delta, pieces), STOP))
    assert table.args.iloc[0] == "".join(pieces)


def test_identity_comes_from_the_announcement() -> None:
    row = scl.calls(anthropic(START, TOOL, args_delta("{}"), STOP)).iloc[0]
    assert (row.block, row.call_id, row.tool) == (1, "toolu_1", "lookup")


def test_complete_only_when_the_stop_event_arrived() -> None:
    table = scl.calls(anthropic(START, TOOL, args_delta('{"a": 1}')))
    assert not table.complete.iloc[0]


def test_a_call_cut_off_still_loads_with_its_partial_args() -> None:
    table = scl.calls(anthropic(START, TOOL, args_delta('{"a": ')))
    assert (table.args.iloc[0], table.valid_json.iloc[0]) == ('{"a": ', False)


def test_n_deltas_counts_non_empty_fragments() -> None:
    fragments = [args_delta(""), args_delta("{"), args_delta("}")]
    table = scl.calls(anthropic(START, TOOL, *fragments, STOP))
    assert table.n_deltas.iloc[0] == 2


def test_wire_chars_sums_the_escaped_lengths() -> None:
    table = scl.calls(anthropic(START, TOOL, args_delta('{"a": "\u00e9"}'), STOP))
    assert (table.chars.iloc[0], table.wire_chars.iloc[0]) == (10, 19)


def test_parallel_chat_calls_stay_apart() -> None:
    second = {"tool_calls": [{"index": 1, "id": "call_2", "function": {"name": "lookup",
                                                                       "arguments": ""}}]}
    body = chat(ANNOUNCE, second, arg('{"id": 1}', 0), arg('{"id": 2}', 1), finish="tool_calls")
    table = scl.calls(body)
    assert list(table.args) == ['{"id": 1}', '{"id": 2}'] and table.complete.all()


def test_chat_without_finish_reason_is_incomplete() -> None:
    table = scl.calls(chat(ANNOUNCE, arg("{}"), done=False))
    assert not table.complete.iloc[0]


def test_responses_done_is_checked_against_the_fragments() -> None:
    body = responses(
        ADDED,
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"},
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{ }"},
    )
    row = scl.calls(body).iloc[0]
    assert (row.complete, row.final_matches) == (True, False)
    assert "differ" in row.problem


def test_a_reused_index_is_a_new_call() -> None:
    again = {"tool_calls": [{"index": 0, "id": "call_9", "function": {"name": "lookup",
                                                                       "arguments": ""}}]}
    table = scl.calls(chat(ANNOUNCE, arg("{}"), again, arg("[]"), finish="tool_calls"))
    assert list(zip(table.call_id, table.args, strict=True)) == [("call_1", "{}"), ("call_9", "[]")]


def test_a_fragment_for_an_unannounced_call_is_kept_and_flagged() -> None:
    row = scl.calls(anthropic(START, args_delta("{}", index=3))).iloc[0]
    assert (row.block, row.args) == (3, "{}") and "never announced" in row.problem


def test_accepts_a_deltas_frame_or_a_source() -> None:
    body = anthropic(START, TOOL, args_delta("{}"), STOP)
    pd.testing.assert_frame_equal(scl.calls(scl.load(body)), scl.calls(body))


def test_many_turns_keep_their_own_calls() -> None:
    body = anthropic(START, TOOL, args_delta("{}"), STOP)
    deltas = pd.concat([scl.load(body, name="a"), scl.load(body, name="b")])
    assert list(scl.calls(deltas).turn) == ["a", "b"]


def test_a_turn_with_no_calls_gives_an_empty_typed_table() -> None:
    table = scl.calls(anthropic(START))
    assert len(table) == 0 and str(table.args.dtype) == "str"


# -- identity that arrives late or changes (issue #29) -------------------------------------
def _chat(*entries: dict | None, finish: str = "tool_calls") -> bytes:
    chunks = [{"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"tool_calls": [e]} if e else {}, "finish_reason": None}]}
        for e in entries]
    chunks.append({"object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) \
        + b"data: [DONE]\n\n"


def test_a_chat_name_that_arrives_after_the_id_is_the_calls() -> None:
    body = _chat({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": ""}},
                 {"index": 0, "function": {"name": "get_weather", "arguments": '{"q":'}},
                 {"index": 0, "function": {"arguments": "1}"}})
    table = scl.calls(body)
    assert table[["call_id", "tool", "args"]].values.tolist() == [
        ["call_1", "get_weather", '{"q":1}']]
    assert table.problem.isna().all()
    assert list(scl.anomalies(scl.load(body)).anomaly) == ["late_identity"]


def test_a_chat_call_that_never_gets_a_name_is_a_problem() -> None:
    body = _chat({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": "{}"}})
    assert "no tool name" in scl.calls(body).problem[0]


def test_a_chat_name_that_changes_keeps_the_first_and_is_named() -> None:
    body = _chat({"index": 0, "id": "call_1", "function": {"name": "a", "arguments": "{"}},
                 {"index": 0, "function": {"name": "b", "arguments": "}"}})
    with pytest.raises(scl.CaptureError, match=r"name 'a' then 'b'"):
        scl.load(body)
    table = scl.calls(body, strict=False)
    assert table.tool.tolist() == ["a"] and "'a' then 'b'" in table.problem[0]


def _responses(done_call_id: str) -> bytes:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_A", "name": "f",
            "arguments": ""}
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", "output_index": 0,
         "item_id": "fc_1", "delta": "{}"},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {**item, "call_id": done_call_id, "arguments": "{}"}},
        {"type": "response.completed", "response": {"status": "completed"}}]
    return b"".join(b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode()
                    + b"\n\n" for e in events)


def test_a_responses_done_event_that_names_another_call_id_is_never_resolved_silently() -> None:
    assert scl.calls(_responses("call_A")).problem.isna().all()
    body = _responses("call_B")
    with pytest.raises(scl.CaptureError) as e:
        scl.load(body)
    assert "'call_A' then 'call_B'" in str(e.value) and e.value.offset == body.index(
        b"event: response.output_item.done")
    rows = scl.load(body, strict=False)
    assert rows.loc[rows.kind == "block_stop", "call_id"].tolist() == ["call_B"]  # kept beside
    table = scl.calls(rows)
    assert table.call_id.tolist() == ["call_A"] and "'call_A' then 'call_B'" in table.problem[0]
    found = scl.anomalies(rows)
    assert found.anomaly.tolist() == ["identity_changed"]
    assert "first at byte 0" in found.detail[0] and str(e.value.offset) in found.detail[0]
