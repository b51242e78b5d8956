"""anomalies(): each quirk in the shape a public thread quotes, found at its byte and read right.

One behaviour per test. The frames are the ones the threads (and the research notes behind
them) quote, cut down to the fields that matter; where the kit's own real captures show the
quirk, a test holds the count found there.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab.producers import ANOMALY_COLUMNS, anomalies

from ..conftest import CAPTURES
from ..support.sse_turns import DONE, sse


def chunk(*tool_calls: dict, content: str | None = None, finish: str | None = None,
          **top: object) -> tuple[None, dict]:
    delta: dict = {}
    if content is not None:
        delta["content"] = content
    if tool_calls:
        delta["tool_calls"] = list(tool_calls)
    return None, {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}], **top}


def announce(index: int = 0, call_id: str = "call_1", name: str = "get_weather",
             arguments: object = "") -> dict:
    return {"index": index, "id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def piece(text: str, index: int = 0, **identity: object) -> dict:
    fn: dict = {"arguments": text}
    if "name" in identity:
        fn["name"] = identity.pop("name")
    return {"index": index, **identity, "function": fn}


def chat(*chunks: tuple[None, dict], finish: str = "tool_calls") -> bytes:
    return sse(*chunks, chunk(finish=finish)) + DONE


def found(body: bytes) -> dict[str, list[tuple]]:
    table = anomalies(scl.load(body))
    assert tuple(table.columns) == ANOMALY_COLUMNS
    out: dict[str, list[tuple]] = {}
    for row in table.itertuples():
        call_id = None if pd.isna(row.call_id) else row.call_id
        out.setdefault(row.anomaly, []).append((row.offset, call_id, row.detail))
    return out


def calls(body: bytes) -> list[tuple]:
    return [(c.call_id, c.tool, c.args, c.complete) for c in scl.calls(body).itertuples()]


def at(body: bytes, needle: bytes) -> int:
    """The byte offset of the frame that holds ``needle``."""
    before = body.rfind(b"\n\n", 0, body.index(needle))
    return 0 if before < 0 else before + 2


# -- blank and repeated identity -------------------------------------------------------------
def test_an_empty_id_on_follow_on_fragments_continues_the_call() -> None:
    """OpenRouter / DashScope qwen3-max: ``"id": ""`` on every follow-on fragment (the one
    real recording the loader used to split into two calls)."""
    body = chat(chunk(announce()), chunk(piece('{"city": "San ', id="", type="function")),
                chunk(piece('Francisco"}', id="", type="function")))
    assert calls(body) == [("call_1", "get_weather", '{"city": "San Francisco"}', True)]
    (offset, call_id, detail), = found(body)["blank_identity"]
    assert offset == at(body, b'"id": ""') and call_id == "call_1" and "(2 times)" in detail


def test_a_null_id_type_and_name_on_follow_ons_keep_the_announced_identity() -> None:
    """deepseek-acp#4 (and Together's DeepSeek-V3.1): ``id``, ``type`` and ``name`` all null."""
    body = chat(chunk(announce(name="todo_write")),
                chunk(piece('{"todos":["test"]}', id=None, type=None, name=None)))
    assert calls(body) == [("call_1", "todo_write", '{"todos":["test"]}', True)]
    assert "id null, type null, name null" in found(body)["blank_identity"][0][2]


def test_an_empty_name_on_every_continuation_is_not_a_new_tool() -> None:
    """lmstudio-bug-tracker#649: ``"name": ""`` on every continuation chunk."""
    body = chat(chunk(announce(name="count")), chunk(piece("count", type="function", name="")))
    assert calls(body) == [("call_1", "count", "count", True)]
    assert 'name ""' in found(body)["blank_identity"][0][2]


def test_a_name_repeated_on_every_fragment_is_not_appended() -> None:
    """llama.cpp#13774: the whole tool name on every delta (a concatenating client built
    ``final_resultfinal_resultfinal_result``)."""
    body = chat(chunk(announce(name="final_result")),
                chunk(piece('{"a":', id="call_1", type="function", name="final_result")),
                chunk(piece("1}", id="call_1", type="function", name="final_result")))
    assert calls(body) == [("call_1", "final_result", '{"a":1}', True)]
    assert "id and name sent again" in found(body)["repeated_identity"][0][2]


# -- what arrives with the announcement --------------------------------------------------
def test_the_first_fragment_on_the_announcement_is_kept() -> None:
    """llama.cpp#22722 (and req_llm PR #801): the opening ``{`` ships with the name."""
    body = chat(chunk(announce(name="list_metrics", arguments="{")),
                chunk(piece('"database":"x"}')))
    assert calls(body) == [("call_1", "list_metrics", '{"database":"x"}', True)]
    assert found(body)["args_in_announcement"][0][0] == at(body, b'"arguments": "{"')


def test_several_whole_calls_in_one_chunk_are_several_calls() -> None:
    """ogx PR #630, litellm#7621: Groq sends each call whole; here both in one chunk, with the
    finish reason on it too (adk-python#7004 kept only the last)."""
    body = sse(chunk(announce(0, "a", "f", "{}"), announce(1, "b", "g", '{"q":1}'),
                     finish="tool_calls")) + DONE
    assert calls(body) == [("a", "f", "{}", True), ("b", "g", '{"q":1}', True)]
    assert "2 calls announced" in found(body)["whole_calls_in_one_chunk"][0][2]


def test_a_call_with_null_arguments_is_empty_and_finished() -> None:
    """pydantic-ai#1654: ``arguments`` null on a no-parameter tool."""
    body = chat(chunk(announce(name="llm_version", arguments=None)))
    assert calls(body) == [("call_1", "llm_version", "", True)]
    assert "empty_arguments" in found(body)


# -- stop reasons and chunks that carry nothing --------------------------------------------
def test_a_stop_finish_after_calls_is_found_and_the_call_is_still_finished() -> None:
    """vllm PR #9209: named ``tool_choice`` streams end ``"stop"`` (as OpenAI's do)."""
    body = chat(chunk(announce(arguments='{"x":1}')), finish="stop")
    assert calls(body) == [("call_1", "get_weather", '{"x":1}', True)]
    (offset, _, detail), = found(body)["stop_reason_mismatch"]
    assert "'stop'" in detail and offset == at(body, b'"finish_reason": "stop"')


def test_a_content_filter_chunk_with_no_delta_is_a_finding_not_a_crash() -> None:
    """autogen#6465: Azure's annotation chunk has a choice with no ``delta``."""
    azure = (None, {"id": "", "object": "", "created": 0, "model": "", "choices": [
        {"index": 0, "finish_reason": None, "content_filter_offsets": {"check_offset": 44}}],
        "usage": None})
    body = chat(chunk(announce(arguments="{}")), azure)
    assert calls(body) == [("call_1", "get_weather", "{}", True)]
    assert "no delta" in found(body)["empty_choices"][0][2]


def test_a_prompt_filter_chunk_with_no_choices_says_what_it_carries() -> None:
    """CopilotKit#2468: Azure's ``choices: []`` with ``prompt_filter_results`` first."""
    first = (None, {"choices": [], "created": 0, "id": "", "model": "", "object": "",
                    "prompt_filter_results": [{"prompt_index": 0}]})
    body = chat(first, chunk(announce(arguments="{}")))
    assert "prompt filter results" in found(body)["empty_choices"][0][2]


def test_indices_that_start_at_one_are_found_and_keyed_as_sent() -> None:
    """litellm#5231: Anthropic's block index forwarded as the Chat index (1, after text)."""
    body = chat(chunk(announce(index=1, arguments='{"x":1}')))
    assert [c.block for c in scl.calls(body).itertuples()] == [1]
    assert "indices [1]" in found(body)["index_gap"][0][2]


# -- arguments that arrive whole, repeated, as text, or broken ---------------------------
def test_arguments_only_in_the_done_event_are_the_calls_arguments() -> None:
    """litellm#27144 (LM Studio's open-responses): no argument deltas, the text in ``.done``."""
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
            "arguments": ""}
    args = '{"location":"San Francisco"}'
    body = sse(*((e["type"], e) for e in (
        {"type": "response.output_item.added", "output_index": 2, "item": item},
        {"type": "response.function_call_arguments.done", "output_index": 2,
         "item_id": "fc_1", "arguments": args},
        {"type": "response.output_item.done", "output_index": 2,
         "item": {**item, "arguments": args}},
        {"type": "response.completed", "response": {"status": "completed"}})))
    assert calls(body) == [("call_1", "weather", args, True)]
    assert found(body)["args_only_in_done"][0][0] == at(body, b"arguments.done")


def test_cumulative_snapshots_are_marked_never_repaired() -> None:
    """langgraphjs#2570: a proxy re-sends the arguments so far on every chunk."""
    body = chat(chunk(announce()), chunk(piece('{"x"')), chunk(piece('{"x":1')),
                chunk(piece('{"x":1}')))
    (_, _, args, _), = calls(body)
    assert args == '{"x"{"x":1{"x":1}'  # joined as sent: the format's rule
    assert "each repeating the one before" in found(body)["snapshot_deltas"][0][2]


def test_fragments_that_only_grow_by_accident_are_not_snapshots() -> None:
    body = chat(chunk(announce()), chunk(piece('{"a":"a')), chunk(piece('a"}')))
    assert "snapshot_deltas" not in found(body)


def test_a_call_written_as_markup_in_the_text_is_found_across_fragments() -> None:
    """vllm-mlx PR #163: ``<tool_call>`` XML in ``content``, no ``tool_calls``, finish "stop"."""
    body = chat(chunk(content="Sure. <tool_"), chunk(content='call>{"name": "f"}</tool_call>'),
                finish="stop")
    assert calls(body) == []
    (offset, call_id, detail), = found(body)["call_in_text"]
    assert offset == at(body, b"<tool_") and call_id is None and "<tool_call>" in detail


def test_arguments_that_do_not_parse_are_found_and_handed_on_as_sent() -> None:
    """mastra#14179: a trailing ``<|endoftext|>`` after the JSON."""
    body = chat(chunk(announce()), chunk(piece('{"x":1}<|endoftext|>')))
    assert calls(body)[0][2] == '{"x":1}<|endoftext|>'
    assert not scl.calls(body)["valid_json"].iloc[0]
    assert "do not parse" in found(body)["invalid_arguments"][0][2]


def test_a_cut_call_is_not_called_invalid() -> None:
    body = sse(chunk(announce()), chunk(piece('{"x":')))
    assert "invalid_arguments" not in found(body)


def test_a_line_separator_inside_a_value_is_found_and_kept() -> None:
    """OpenMetadata#29531: U+2028 and friends are line ends to ``str.splitlines()``."""
    body = chat(chunk(announce()), chunk(piece('{"note": "a\u2028b"}')))
    assert calls(body)[0][2] == '{"note": "a\u2028b"}'
    assert "U+2028" in found(body)["line_separator_in_data"][0][2]


# -- two calls at once ---------------------------------------------------------------------
def test_alternating_fragments_are_found_and_each_goes_to_its_index() -> None:
    body = chat(chunk(announce(0, "a", "f")), chunk(announce(1, "b", "g")),
                chunk(piece('{"x":', 0)), chunk(piece('{"y":', 1)), chunk(piece("1}", 0)),
                chunk(piece("2}", 1)))
    assert calls(body) == [("a", "f", '{"x":1}', True), ("b", "g", '{"y":2}', True)]
    assert "interleaved_calls" in found(body)


def test_a_new_id_at_a_used_index_is_a_new_call() -> None:
    """Cerebras zai-glm-4.7 (and ollama#15457): every parallel call at index 0."""
    body = chat(chunk(announce(0, "bbd2b9d98", "nonUsefulTool", "{}")),
                chunk(announce(0, "e0ecf32e0", "nonUsefulTool", "{}")))
    assert calls(body) == [("bbd2b9d98", "nonUsefulTool", "{}", True),
                           ("e0ecf32e0", "nonUsefulTool", "{}", True)]
    assert found(body)["index_reuse"][0][1] == "e0ecf32e0"


# -- other formats -------------------------------------------------------------------------
def test_a_client_tool_finished_with_end_turn_is_a_mismatch_but_a_server_tool_is_not() -> None:
    def turn(block_type: str, call_id: str) -> bytes:
        return sse(*((e["type"], e) for e in (
            {"type": "message_start", "message": {"id": "msg_1", "content": []}},
            {"type": "content_block_start", "index": 0, "content_block": {
                "type": block_type, "id": call_id, "name": "web_search", "input": {}}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"q": "x"}'}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
            {"type": "message_stop"})))
    assert "stop_reason_mismatch" in found(turn("tool_use", "toolu_1"))
    assert "stop_reason_mismatch" not in found(turn("server_tool_use", "srvtoolu_1"))


def test_a_turn_with_nothing_unusual_gives_no_rows() -> None:
    body = chat(chunk(announce()), chunk(piece('{"city": "Paris"}')))
    assert anomalies(scl.load(body)).empty


def test_an_empty_table_gives_an_empty_table_with_the_columns() -> None:
    empty = anomalies(scl.load(b"", strict=False).iloc[0:0])
    assert empty.empty and tuple(empty.columns) == ANOMALY_COLUMNS


# -- the real recordings ---------------------------------------------------------------------
@pytest.mark.captures
def test_the_real_chat_recordings_show_what_was_measured_in_them(captures) -> None:
    """Counts measured on ../shared/captures/openai-chat (21 named-tool_choice streams that end
    "stop", Together's DeepSeek null identities in 3 recordings, 203 chunks with no choices)."""
    table = anomalies(scl.load(captures / "openai-chat", strict=False))
    turns = table.groupby("anomaly", observed=True)["turn"].nunique()
    assert turns["stop_reason_mismatch"] == 21
    assert turns["blank_identity"] == 3
    assert turns["empty_choices"] == 203


@pytest.mark.captures
def test_the_dashscope_recording_reads_as_one_call(captures) -> None:
    body = (captures / "openai-chat" / "vercel__ai__alibaba-tool-call.jsonl").read_bytes()
    lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    sse_body = sse(*((None, c) for c in lines))
    (call,) = scl.calls(sse_body).itertuples()
    assert call.tool == "weather" and call.complete and "San Francisco" in call.args
    assert "blank_identity" in found(sse_body)


def test_captures_fixture_exists() -> None:
    assert CAPTURES.name == "captures"
