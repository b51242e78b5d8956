"""A stream read as a known format it is not is never read in silence (``providers.misread``).

Most frames showing nothing of the format, or a call in a frame not of the format that no
row read (no call at all, or none by its id), is one problem row naming what the stream
looks like (strict: an error at that frame). No real capture gains one.
"""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

import orjson
import pytest

import streamcalls_lab as scl
from streamcalls_lab import CaptureError
from streamcalls_lab._fastpath import hot_rows, whole_rows
from streamcalls_lab.events import Ev
from streamcalls_lab.framing.sse import split_whole
from streamcalls_lab.providers import FORMATS, READERS, misread
from streamcalls_lab.providers.misread import call_part
from streamcalls_lab.turns import Call, Script, Text, body, write

from ..support.compare import assert_same
from ..support.sse_turns import anthropic, chat, responses, sse

TURN = Script((Text(("Let me ", "check.")),
               Call("get_weather", "call_Q1r7Xk2Lm9Q1r7Xk2Lm9Q1r7", ('{"city": ', '"Paris"}'))))
PROSE = Script((Text(("Let me ", "check.")),))
PAIRS = list(permutations(sorted(FORMATS), 2))


def _turn(name: str, turn: Script = TURN) -> bytes:
    return body(name, write(name, turn))


def _misreads(df) -> list[str]:
    return [p for p in df.problem.dropna() if p.startswith("read as ")]


def _with_frame(raw: bytes, frame: bytes, before: bytes = b"data: [DONE]") -> bytes:
    at = raw.index(before)
    return raw[:at] + frame + raw[at:]


@pytest.mark.parametrize(("written", "read_as"), PAIRS)
def test_a_turn_read_as_another_format_is_never_read_in_silence(written: str,
                                                                 read_as: str) -> None:
    df = scl.load(_turn(written), provider=read_as, strict=False)
    assert df.problem.notna().any()


@pytest.mark.parametrize(("written", "read_as"), PAIRS)
def test_a_misread_turn_raises_in_strict_mode(written: str, read_as: str) -> None:
    with pytest.raises(CaptureError):
        scl.load(_turn(written), provider=read_as)


def test_a_misread_of_foreign_frames_names_the_format_the_stream_looks_like() -> None:
    df = scl.load(_turn("anthropic-messages", PROSE), provider="bedrock-converse",
                  strict=False)
    assert _misreads(df) == [
        "read as bedrock-converse, but 7 of its 7 frames show nothing of bedrock-converse "
        "(the first: frame 0, event 'message_start'): it looks like anthropic-messages: load "
        "it with provider='anthropic-messages', or let it be detected"]


def test_a_misread_call_names_where_it_is_and_what_the_stream_looks_like() -> None:
    df = scl.load(_turn("anthropic-messages"), provider="bedrock-converse", strict=False)
    assert _misreads(df) == [
        "read as bedrock-converse, but no call was read while frame 5 holds one "
        "(`content_block`, tool 'get_weather'): it looks like anthropic-messages: load it "
        "with provider='anthropic-messages', or let it be detected"]


def test_strict_mode_raises_the_misread_at_the_frame_that_shows_it() -> None:
    raw = _turn("anthropic-messages", PROSE)
    with pytest.raises(CaptureError) as e:
        scl.load(raw, provider="bedrock-converse")
    assert e.value.offset == 0 and e.value.reason.startswith("read as bedrock-converse")


def test_the_misread_row_is_at_the_frame_that_shows_it_numbered_past_the_last() -> None:
    df = scl.load(_turn("ag-ui", PROSE), provider="ai-sdk-ui", strict=False)
    row = df[df.problem.str.startswith("read as ", na=False)]
    assert len(row) == 1 and row.offset.iloc[0] == 0
    assert row.index[0] == df.index[-1] and row.frame.iloc[0] == df.frame.iloc[-2] + 1


CHAT = chat({"role": "assistant"}, {"content": "Hi"}, {"content": " there"}, finish="stop")
GATEWAY_CALL = sse((None, {"id": "x", "tool_calls": [{"id": "call_1", "type": "function",
                                                      "function": {"name": "f",
                                                                   "arguments": "{}"}}]}))


def test_a_call_in_a_frame_not_of_the_format_is_a_problem_when_no_call_was_read() -> None:
    df = scl.load(_with_frame(CHAT, GATEWAY_CALL), strict=False)
    assert set(df.provider) == {"openai-chat"}
    assert _misreads(df) == [
        "read as openai-chat, but no call was read while frame 4 holds one "
        "(`tool_calls[0].function`, tool 'f'): it may be a format this kit does not read"]


CALLED = sse(*((None, c) for c in (  # an AI SDK UI stream with one call read
    {"type": "start"},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}})),
    (None, {"type": "finish"}))
FUTURE_CALL = sse((None, {"type": "tool-call-whole", "toolCallId": "c2", "toolName": "later",
                          "input": {"x": 1}}))  # a chunk type the reader does not know


def test_a_call_no_row_read_is_a_problem_beside_calls_that_were_read() -> None:
    """A probe: an unknown chunk type carrying a second call, after one call was read, was
    lost in silence (the check asked only streams that read no call)."""
    df = scl.load(_with_frame(CALLED, FUTURE_CALL, b'data: {"type": "finish"'),
                  strict=False)
    assert set(df.provider) == {"ai-sdk-ui"}
    assert _misreads(df) == [
        "read as ai-sdk-ui, but frame 2 holds a call no row read (`(the payload)`, tool "
        "'later'): it may be a format this kit does not read"]


def test_another_formats_call_beside_calls_that_were_read_is_a_problem() -> None:
    """A probe: a Chat chunk's call inside an AI SDK UI stream that read a call of its own
    (the chunk's ``function`` names no id: it is told apart by its tool)."""
    chunk = sse((None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "tool_calls": [{"index": 0, "id": "call_zz", "type": "function",
                        "function": {"name": "leak", "arguments": "{}"}}]}}]}))
    df = scl.load(_with_frame(CALLED, chunk, b'data: {"type": "finish"'), strict=False)
    assert _misreads(df) == [
        "read as ai-sdk-ui, but frame 2 holds a call no row read "
        "(`choices[0].delta.tool_calls[0].function`, tool 'leak'): it looks like openai-chat: "
        "load it with provider='openai-chat', or let it be detected"]


@pytest.mark.parametrize("before", [False, True])
def test_a_foreign_frame_repeating_a_call_that_was_read_is_no_misread(before: bool) -> None:
    """A gateway's summary of a call read before or after it loses nothing."""
    repeat = sse((None, {"summary": {"toolCallId": "c1", "toolName": "f", "input": {}}}))
    at = b'data: {"type": "tool-input' if before else b'data: {"type": "finish"'
    df = scl.load(_with_frame(CALLED, repeat, at), strict=False)
    assert not _misreads(df)


def test_a_stream_with_a_frame_or_two_of_another_shape_is_no_misread() -> None:
    odd = sse((None, {"id": "x", "note": "a gateway's own"}))
    assert not _misreads(scl.load(_with_frame(CHAT, odd), strict=False))


def test_a_server_tool_call_in_a_frame_of_the_format_is_no_misread() -> None:
    raw = responses(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {
            "id": "ws_1", "type": "web_search_call", "name": "web_search",
            "arguments": "{\"query\": \"x\"}", "status": "completed"}},
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}})
    df = scl.load(raw)
    assert df.problem.isna().all()


def test_a_formats_keepalive_is_not_foreign() -> None:
    ping = {"type": "ping"}
    raw = anthropic({"type": "message_start", "message": {"id": "msg_1"}},
                    *[ping] * 6, {"type": "message_stop"})
    assert scl.load(raw).problem.isna().all()


def test_a_keepalive_as_sent_is_not_asked_of_every_format(monkeypatch) -> None:
    """Anthropic's ping exactly as the format declares it is told by that declaration,
    decided once per format, not by asking every format's signature of each ping (most of
    the misread checks' cost on Anthropic streams); a ping with anything more is asked."""
    asked: list[str] = []
    real = misread.sniff
    monkeypatch.setattr(misread, "sniff", lambda e, p: asked.append(e) or real(e, p))
    misread.foreigner.cache_clear()
    try:
        foreign = misread.foreigner("anthropic-messages")
        asked.clear()
        rows = (Ev("ping", "other"),)
        assert not foreign("ping", {"type": "ping"}, rows)
        assert asked == []
        assert not foreign("ping", {"type": "ping", "seq": 1}, rows)
        assert asked == ["ping"]
    finally:
        misread.foreigner.cache_clear()


@pytest.mark.parametrize("written", ["anthropic-messages", "ai-sdk-ui", "openai-chat"])
def test_the_fast_path_leaves_a_misread_to_the_decoder(written: str) -> None:
    raw = _turn(written)
    read_as = "openai-responses"
    assert whole_rows(raw, read_as) is None
    assert_same(raw, read_as)


def test_the_fast_path_leaves_a_call_it_did_not_read_to_the_decoder() -> None:
    raw = _with_frame(CHAT, GATEWAY_CALL)
    assert whole_rows(raw) is None
    assert_same(raw)


@pytest.mark.parametrize("name", [n for n in sorted(FORMATS) if READERS[n].hot is not None])
def test_every_frame_the_fast_path_reads_hot_shows_its_format(name: str) -> None:
    """The fast path counts no hot frame foreign: each must carry the format's signature."""
    frames = write(name, TURN) + write(name, PROSE)
    split = split_whole(body(name, frames))
    assert split is not None
    _, events, lines = split
    rows = hot_rows(READERS[name].hot, events, lines)
    hot = [i for i, r in enumerate(rows) if r is not None]
    assert hot and all(READERS[name].sniff(events[i], orjson.loads(lines[i])) for i in hot)


def test_a_chat_chunk_without_its_signature_is_not_read_hot() -> None:
    rows = hot_rows(READERS["openai-chat"].hot, ["message"], [b"{}"])
    assert rows == [None]


# -- what a call looks like, in any format's terms ---------------------------------------------
CALLS = {
    "chat tool_calls": {"choices": [{"delta": {"tool_calls": [
        {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}]}}]},
    "anthropic tool_use": {"content_block": {"type": "tool_use", "id": "toolu_1",
                                             "name": "f", "input": {}}},
    "gemini functionCall": {"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "f", "args": {"a": 1}}}]}}]},
    "bedrock toolUse": {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": "f"}}},
    "ai sdk ui tool-input-start": {"type": "tool-input-start", "toolCallId": "c1",
                                   "toolName": "f"},
    "ag-ui TOOL_CALL_START": {"type": "TOOL_CALL_START", "toolCallId": "c1",
                              "toolCallName": "f"},
    "langgraph tool_call_chunks": [{"type": "AIMessageChunk", "tool_call_chunks": [
        {"name": "f", "args": "", "id": "call_1", "index": 0}]}, {"langgraph_node": "a"}],
    "mistral function.call.delta": {"type": "function.call.delta", "tool_call_id": "t1",
                                    "name": "f", "arguments": "{"},
}
RESULTS = {
    "ai sdk ui tool-output-available": {"type": "tool-output-available",
                                        "toolCallId": "c1", "output": {"t": 21}},
    "ag-ui TOOL_CALL_RESULT": {"type": "TOOL_CALL_RESULT", "toolCallId": "c1",
                               "messageId": "m1", "content": "21"},
    "anthropic web_fetch_tool_result": {"content_block": {
        "type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {}}},
    "a tool's definition": {"tools": [{"type": "function", "name": "f",
                                       "parameters": {"type": "object"}}]},
}


@pytest.mark.parametrize("shape", CALLS)
def test_a_call_is_found_in_every_formats_terms(shape: str) -> None:
    assert call_part(CALLS[shape]) is not None


def test_a_call_nested_deeper_than_the_interpreter_recurses_is_found() -> None:
    deep = orjson.loads(b"[" * 1000 + b'{"name": "f", "args": {}}' + b"]" * 1000)
    where = call_part(deep)
    assert where is not None and where.endswith("[0]`, tool 'f'") and len(where) < 100


@pytest.mark.parametrize("shape", RESULTS)
def test_a_tool_result_or_definition_is_no_call(shape: str) -> None:
    assert call_part(RESULTS[shape]) is None


@pytest.mark.captures
def test_no_real_capture_gains_a_misread_problem(readable_captures: list[Path]) -> None:
    misread = [p.name for p in readable_captures if _misreads(scl.load(p, strict=False))]
    assert not misread
