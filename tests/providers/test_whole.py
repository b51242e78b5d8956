"""Each format's ``whole`` reader: a non-streamed response's calls (their arguments exactly as
sent), stop reason and text, as ``conform`` holds a streamed turn to, and None for anything
else. The responses are written from each API's documented shape; the arguments keep their
spacing and escapes, as a real body does, so a re-serialised object would not pass."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from streamcalls_lab.providers import FORMATS, Answer

ARGS = '{"city": "Montr\\u00e9al",  "days": [1, 2]}'
"""A call's arguments as a server writes them: a ``\\u`` escape, two spaces, a list."""
VALUE = json.loads(ARGS)


def _text(payload: dict[str, Any], *raw: str) -> str:
    """``payload``'s JSON with each ``"@<n>"`` placeholder replaced by ``raw[n]`` as written."""
    out = json.dumps(payload)
    for n, text in enumerate(raw):
        out = out.replace(f'"@{n}"', text)
    return out


WHOLE: dict[str, tuple[str, Answer]] = {
    "anthropic-messages": (_text({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": "@0"},
                    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
                     "input": "@1"}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 5}}, ARGS, '{"query":"x"}'),
        Answer(({"call_id": "toolu_01A", "tool": "weather", "args": ARGS},
                {"call_id": "srvtoolu_01", "tool": "web_search", "args": '{"query":"x"}'}),
               "tool_use", "Let me check.")),
    "openai-chat": (json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt",
        "choices": [
            {"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "weather", "arguments": ARGS}}]}},
            {"index": 1, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "another choice"}}]}),
        Answer(({"call_id": "call_1", "tool": "weather", "args": ARGS},), "tool_calls", "")),
    "openai-responses": (json.dumps({
        "id": "resp_1", "object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [
            {"type": "message", "id": "msg_1", "role": "assistant", "content": [
                {"type": "output_text", "text": "Checking.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
             "arguments": ARGS, "status": "completed"}]}),
        Answer(({"call_id": "call_1", "tool": "weather", "args": ARGS},),
               "max_output_tokens", "Checking.")),
    "gemini": (_text({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "plan", "thought": True}, {"text": "Checking."},
            {"functionCall": {"name": "weather", "args": "@0"}}]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 3}, "modelVersion": "gemini-2.5"}, ARGS),
        Answer(({"call_id": None, "tool": "weather", "args": ARGS},), "STOP", "Checking.")),
    "ollama": (_text({
        "model": "qwen3", "created_at": "2025-06-02T10:15:01Z", "message": {
            "role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "weather", "arguments": "@0"}},
                {"function": {"name": "time", "arguments": '{"tz": "UTC"}'}}]},
        "done_reason": "stop", "done": True, "eval_count": 9}, ARGS),
        Answer(({"call_id": None, "tool": "weather", "args": ARGS},
                {"call_id": None, "tool": "time", "args": '{"tz": "UTC"}'}), "stop", "")),
    "cohere-chat": (json.dumps({
        "id": "c1", "finish_reason": "TOOL_CALL", "message": {
            "role": "assistant", "tool_plan": "I will look it up.",
            "tool_calls": [{"id": "weather_1", "type": "function",
                            "function": {"name": "weather", "arguments": ARGS}}]},
        "usage": {"tokens": {"input_tokens": 3}}}),
        Answer(({"call_id": "weather_1", "tool": "weather", "args": ARGS},), "TOOL_CALL", "")),
    "bedrock-converse": (_text({
        "output": {"message": {"role": "assistant", "content": [
            {"text": "Checking."},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "weather", "input": "@0"}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": 3}, "metrics": {"latencyMs": 9}},
        ARGS),
        Answer(({"call_id": "tooluse_1", "tool": "weather", "args": ARGS},), "tool_use",
               "Checking.")),
}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_a_whole_response_gives_its_calls_as_written_stop_and_text(name: str) -> None:
    data, answer = WHOLE[name]
    assert FORMATS[name].whole is not None
    assert FORMATS[name].whole(orjson.loads(data), data) == answer


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_no_other_formats_whole_reader_takes_it(name: str) -> None:
    data, _ = WHOLE[name]
    takers = [n for n, f in FORMATS.items() if f.whole is not None
              and f.whole(orjson.loads(data), data) is not None]
    assert takers == [name]


STREAMED = {  # a frame of each format's stream: not a whole response
    "anthropic-messages": {"type": "message_start", "message": {"id": "m", "content": []}},
    "openai-chat": {"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": "x"}}]},
    "openai-responses": {"type": "response.created", "response": {"object": "response"}},
    "ollama": {"model": "m", "created_at": "t", "message": {"content": "x"}, "done": False},
    "cohere-chat": {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
    "bedrock-converse": {"messageStop": {"stopReason": "end_turn"}},
}


@pytest.mark.parametrize("name", sorted(STREAMED))
def test_a_streamed_frame_is_no_whole_response(name: str) -> None:
    payload = STREAMED[name]
    assert FORMATS[name].whole(payload, json.dumps(payload)) is None


def test_a_whole_response_with_a_field_of_the_wrong_type_is_reported() -> None:
    data = json.dumps({"type": "message", "content": [
        {"type": "tool_use", "id": 7, "name": "f", "input": {}}]})
    with pytest.raises(TypeError, match=r"content\[\]\.id should be a string"):
        FORMATS["anthropic-messages"].whole(orjson.loads(data), data)
