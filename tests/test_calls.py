"""calls(): one row per call, args byte-exact, completion only from the stop event."""

from __future__ import annotations

import pandas as pd

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
