"""Each wire format normalised to the contract's kinds, one behaviour per test."""

from __future__ import annotations

import json

import pytest

import streamcalls_lab as scl
from streamcalls_lab.loader import load_captures
from streamcalls_lab.sources import resolve

from ..support.sse_turns import (
    ADDED,
    ANNOUNCE,
    N2,
    START,
    TOOL,
    anthropic,
    arg,
    args_delta,
    assert_refused_naming,
    call_start_at,
    chat,
    kinds,
    providers,
    responses,
    sse,
)

# -- what each format's first events say ------------------------------------------

DETECTED = {  # provider: its first event alone
    "anthropic-messages": anthropic(START),
    "openai-chat": chat(ANNOUNCE),
    "openai-responses": responses(ADDED),
}

ANNOUNCED = {  # what announces a call: (the body, its row, what that row sets)
    "anthropic tool_use start": (anthropic(START, TOOL), 1, ("call_start", 1, "toolu_1", "lookup")),
    "chat first chunk": (chat(ANNOUNCE), 0, ("call_start", 0, "call_1", "lookup")),
    "responses output_item.added": (responses(ADDED), 0, ("call_start", 0, "call_1", "lookup")),
}


@pytest.mark.parametrize("provider", DETECTED)
def test_each_format_is_detected_from_its_first_event(provider: str) -> None:
    assert providers(DETECTED[provider]) == {provider}


@pytest.mark.parametrize(("body", "at", "start"), ANNOUNCED.values(), ids=ANNOUNCED)
def test_the_event_announcing_a_call_is_a_call_start_with_id_and_name(
    body: bytes, at: int, start: tuple,
) -> None:
    assert call_start_at(body, at) == start


# -- anthropic-messages ----------------------------------------------------------

def test_anthropic_input_json_delta_is_an_args_fragment() -> None:
    row = scl.load(anthropic(START, TOOL, args_delta('{"a"'))).iloc[2]
    assert (row.kind, row.fragment) == ("args_delta", '{"a"')


def test_anthropic_text_block() -> None:
    body = anthropic(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
    )
    assert kinds(body) == ["other", "text_start", "text_delta", "block_stop"]


def test_anthropic_message_stop_is_turn_stop() -> None:
    assert kinds(anthropic({"type": "message_stop"}))[-1] == "turn_stop"


def test_anthropic_thinking_delta_is_other() -> None:
    body = anthropic(START, {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "thinking_delta", "thinking": "hm"}})
    assert kinds(body) == ["other", "other"]


def test_anthropic_error_event_is_an_error_row_naming_the_provider_error() -> None:
    body = anthropic(START, {"type": "error",
                             "error": {"type": "overloaded_error", "message": "Overloaded"}})
    row = scl.load(body).iloc[-1]
    assert row.kind == "error" and "overloaded_error: Overloaded" in row.problem


# -- openai-chat -----------------------------------------------------------------

def test_chat_later_chunks_are_fragments_keyed_by_index() -> None:
    df = scl.load(chat(ANNOUNCE, arg('{"a"'), arg(": 1}")))
    assert list(df.fragment[1:3]) == ['{"a"', ": 1}"] and list(df.block[1:3]) == [0, 0]


def test_chat_finish_reason_stops_every_open_call() -> None:
    second = {"tool_calls": [{"index": 1, "id": "call_2", "function": {"name": "x",
                                                                       "arguments": ""}}]}
    df = scl.load(chat(ANNOUNCE, second, finish="tool_calls"))
    stops = df[df.kind == "block_stop"]
    assert list(stops.block.astype(object).fillna(-1)) == [-1, 0, 1]


def test_chat_done_is_turn_stop() -> None:
    assert kinds(chat(ANNOUNCE))[-1] == "turn_stop"


def test_chat_arguments_in_the_announcement_are_a_fragment_too() -> None:
    whole = {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f",
                                                                  "arguments": "{}"}}]}
    assert kinds(chat(whole, done=False)) == ["call_start", "args_delta"]


def test_chat_repeated_id_does_not_start_a_new_call() -> None:
    again = {"tool_calls": [{"index": 0, "id": "call_1", "function": {"arguments": "{}"}}]}
    assert kinds(chat(ANNOUNCE, again, done=False)) == ["call_start", "args_delta"]


def test_chat_rows_say_which_of_n_choices_they_belong_to() -> None:
    rows = scl.load(N2)
    assert rows.choice.tolist()[:5] == [0, 0, 1, 1, 0]
    assert rows.choice.isna().iloc[-1]  # [DONE] ends the whole response


def test_chat_calls_of_n_choices_are_kept_apart_though_they_share_an_index() -> None:
    table = scl.calls(N2)
    assert table[["choice", "call_id", "args"]].values.tolist() == [
        [0, "call_a", '{"q":"a"}'], [1, "call_b", '{"q":"b"}']]


def test_chat_finish_reason_closes_only_its_own_choice() -> None:
    table = scl.calls(N2)
    assert table.complete.tolist() == [True, False]  # choice 1 never finished


def test_chat_new_id_at_a_used_index_starts_a_new_call() -> None:
    other = {"tool_calls": [{"index": 0, "id": "call_9", "function": {"name": "lookup",
                                                                       "arguments": ""}}]}
    assert kinds(chat(ANNOUNCE, other, done=False)) == ["call_start", "call_start"]


def test_chat_text_content_is_a_text_delta() -> None:
    row = scl.load(chat({"content": "Hello"})).iloc[0]
    assert (row.kind, row.fragment) == ("text_delta", "Hello")


def test_chat_obfuscation_padding_is_ignored() -> None:
    chunk = {"object": "chat.completion.chunk", "obfuscation": "Xy7",
             "choices": [{"index": 0, "delta": arg("{}"), "finish_reason": None}]}
    row = scl.load(sse((None, chunk))).iloc[0]
    assert (row.kind, row.fragment, row.wire_chars) == ("args_delta", "{}", 2)


def test_chat_usage_chunk_without_choices_is_other() -> None:
    body = sse((None, {"object": "chat.completion.chunk", "choices": [], "usage": {}}))
    assert kinds(body) == ["other"]


def test_a_whole_chat_completion_reads_as_one_chunk_with_its_calls_complete() -> None:
    whole = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "lookup", "arguments": '{"q": "caf\u00e9"}'}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "other", "arguments": "{}"}}]}}]}
    body = sse((None, whole))
    table = scl.calls(body)
    assert list(table.tool) == ["lookup", "other"] and table.complete.all()
    assert scl.load(body).equals(load_captures(resolve(body), bulk=False))
    assert list(table.args) == ['{"q": "caf\u00e9"}', "{}"]


def test_chat_error_payload_is_an_error_row() -> None:
    body = sse((None, {"error": {"message": "rate limited"}}))
    assert scl.load(body).iloc[0].problem == "provider error: rate limited"


# -- openai-responses ------------------------------------------------------------
@pytest.mark.parametrize("error", [
    {"type": "error", "code": "rate_limit", "message": "slow down", "param": None},
    {"type": "error", "error": {"type": "insufficient_quota", "message": "slow down"}},
], ids=["documented-flat", "nested"])
def test_responses_error_event_names_its_message_in_either_shape(error: dict) -> None:
    body = responses({"type": "response.created", "response": {"id": "r"}}, error)
    assert scl.load(body).iloc[-1].problem == "provider error: slow down"



ARGUMENT_EVENTS = {  # an arguments event after the call's announcement: the columns it sets
    "delta is a fragment": ({"type": "response.function_call_arguments.delta", "output_index": 0,
                             "delta": '{"a'},
                            {"kind": "args_delta", "block": 0, "fragment": '{"a'}),
    "done carries the whole string": ({"type": "response.function_call_arguments.done",
                                       "output_index": 0, "arguments": "{}"},
                                      {"kind": "args_done", "final": "{}"}),
}


@pytest.mark.parametrize(("event", "columns"), ARGUMENT_EVENTS.values(), ids=ARGUMENT_EVENTS)
def test_responses_argument_events(event: dict, columns: dict) -> None:
    row = scl.load(responses(ADDED, event)).iloc[1]
    assert {column: row[column] for column in columns} == columns


def test_responses_output_text_delta() -> None:
    body = responses({"type": "response.output_text.delta", "output_index": 1, "delta": "Hi"})
    assert kinds(body) == ["text_delta"]


def test_responses_unknown_event_is_other_and_kept() -> None:
    body = responses({"type": "response.shell_call_command.delta", "output_index": 0,
                      "delta": "ls"})
    row = scl.load(body).iloc[0]
    assert (row.kind, row.event) == ("other", "response.shell_call_command.delta")


def test_responses_completed_is_turn_stop() -> None:
    assert kinds(responses({"type": "response.completed", "response": {}})) == ["turn_stop"]


# -- detection and wire lengths -----------------------------------------------------

def test_frames_before_detection_are_kept_in_order() -> None:
    body = sse(("ping", {"type": "ping"})) + anthropic(START)
    df = scl.load(body)
    assert list(df.event) == ["ping", "message_start"]
    assert set(df.provider) == {"anthropic-messages"}


def test_an_undetectable_stream_loads_as_unknown_other_rows() -> None:
    df = scl.load(sse((None, {"result": []})))
    assert (list(df.provider), list(df.kind)) == (["unknown"], ["other"])


def test_explicit_provider_skips_detection() -> None:
    df = scl.load(sse(("ping", {"type": "ping"})), provider="anthropic-messages")
    assert list(df.provider) == ["anthropic-messages"]


def test_unknown_provider_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown provider 'no-such-format'"):
        scl.load(anthropic(START), provider="no-such-format")


def test_wire_chars_counts_the_escaped_form() -> None:
    frag = 'a "quoted"\n\u00e9'
    body = anthropic(START, TOOL, args_delta(frag))  # json.dumps escapes é as \u00e9
    row = scl.load(body).iloc[2]
    assert (row.chars, row.wire_chars) == (len(frag), len(json.dumps(frag)) - 2)


def test_wire_chars_reads_the_raw_form_not_a_re_encoding() -> None:
    raw = 'data: {"type":"content_block_delta","index":1,' \
          '"delta":{"type":"input_json_delta","partial_json":"\\u0041\\/"}}\n\n'
    row = scl.load(anthropic(START, TOOL) + raw.encode()).iloc[2]
    assert (row.fragment, row.chars, row.wire_chars) == ("A/", 2, 8)


# -- a field of the wrong type is reported, never coerced -----------------------------

WRONG_TYPES = {
    "chat arguments as an object": (
        sse((None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": 0, "id": "c", "function": {"name": "f",
                                                                  "arguments": {"a": 1}}}]}}]})),
        "function.arguments should be a string, not dict"),
    "chat index as a string": (
        sse((None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": "0", "id": "c", "function": {"name": "f"}}]}}]})),
        "tool_calls[].index should be an integer, not str"),
    "anthropic partial_json as a number": (
        anthropic(START, TOOL, args_delta(5)),  # type: ignore[arg-type]
        "partial_json should be a string, not int"),
    "anthropic index beyond 64 bits": (
        anthropic(START, TOOL, args_delta("{", index=2**63)),
        "index should fit in 64 bits"),
    "chat index beyond 64 bits": (
        sse((None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": 2**64 - 1, "function": {"arguments": "{"}}]}}]})),
        "tool_calls[].index should fit in 64 bits"),
    "responses delta as null": (
        responses(ADDED, {"type": "response.function_call_arguments.delta", "output_index": 0,
                          "delta": None}),
        "delta should be a string, not NoneType"),
}


@pytest.mark.parametrize(("body", "reason"), WRONG_TYPES.values(), ids=WRONG_TYPES)
def test_a_field_of_the_wrong_type_is_an_error_naming_the_field(body: bytes, reason: str) -> None:
    assert_refused_naming(body, reason)


def test_responses_events_naming_only_the_item_id_find_their_block() -> None:
    body = responses(
        ADDED,
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{}"},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": "{}"},
    )
    row = scl.calls(body).iloc[0]
    assert (row.block, row.args, row.complete) == (0, "{}", True)


def test_a_type_that_is_not_a_string_does_not_break_format_detection() -> None:
    body = sse(("message_start", {"type": ["message_start"]})) + anthropic(START)
    assert list(scl.load(body).provider.astype(str)) == ["anthropic-messages"] * 2


def test_anthropic_is_detected_from_the_event_line_when_the_payload_has_no_type() -> None:
    body = sse(("content_block_start", {"index": 1, "content_block": TOOL["content_block"]}))
    row = scl.load(body).iloc[0]
    assert (row.provider, row.kind, row.call_id) == ("anthropic-messages", "call_start", "toolu_1")


def test_chat_content_as_typed_parts_keeps_text_and_marks_the_rest_other() -> None:
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]},
             {"type": "text", "text": "Hi"}]
    df = scl.load(chat({"content": parts}, done=False))
    assert list(zip(df.kind.astype(str), df.fragment.fillna("-"), strict=True)) == [
        ("other", "-"), ("text_delta", "Hi")]


def test_a_legacy_completions_stream_keeps_its_text() -> None:
    chunks = [{"object": "text_completion", "choices": [{"text": t, "index": 0,
                                                        "finish_reason": None}]}
              for t in ["Hel", 'lo "x"']]
    body = sse(*((None, c) for c in chunks))
    df = scl.load(body)
    assert list(df.fragment) == ["Hel", 'lo "x"'] and list(df.wire_chars) == [3, 8]
    assert df.equals(load_captures(resolve(body), bulk=False))  # the fast path agrees
