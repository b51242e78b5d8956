"""A stream of unknown format still loads, and each row says what it looks like and why it is
not read: never ``provider == "unknown"`` with no reason."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl
from streamcalls_lab.framing.eventstream import event_message

from ..support.sse_turns import sse
from ..support.wire_samples import ndjson

COHERE_V1 = sse((None, {"is_finished": False, "event_type": "stream-start",
                        "generation_id": "g1"}),
                (None, {"is_finished": False, "event_type": "text-generation", "text": "Hi"}))
ANTHROPIC_LEGACY = sse(("completion", {"type": "completion", "completion": " Hello",
                                       "stop_reason": None, "model": "claude-2.1"}))
HAR_ONE_LINE = ndjson({"log": {"version": "1.2", "entries": []}})
OLLAMA_PULL = ndjson({"status": "pulling manifest"}, {"status": "success"})
SOMETHING = sse((None, {"result": [], "token": "x"}))

REASONS = {  # what every row of the stream says it looks like: the stream
    "looks like Cohere v1 chat": COHERE_V1,
    "looks like Anthropic Text Completions": ANTHROPIC_LEGACY,
    "looks like a HAR export": HAR_ONE_LINE,
    "looks like Ollama progress lines": OLLAMA_PULL,
    "a JSON object with keys result, token": SOMETHING,
    "the data is a JSON list": sse((None, [1, 2])),
    "a whole anthropic-messages response (1 call)": ndjson(
        {"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
         "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}),
    "a whole openai-responses response (1 call)": sse((None, {
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [{"type": "function_call", "name": "f", "arguments": "{}"}]})),
    "a whole cohere-chat response (0 calls)": sse((None, {
        "id": "c1", "finish_reason": "COMPLETE", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "Hi"}]}})),
    "a whole bedrock-converse response (1 call)": ndjson({
        "output": {"message": {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {"a": 1}}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": 1}}),
    "event 'TranscriptEvent', a JSON object with keys Transcript": event_message(
        "TranscriptEvent", b'{"Transcript": {"Results": []}}'),
}


@pytest.mark.parametrize("reason", REASONS)
def test_every_row_of_an_unknown_stream_says_what_it_looks_like(reason: str) -> None:
    df = scl.load(REASONS[reason])  # strict: an unknown format is not an error
    assert set(df.provider) == {"unknown"} and set(df.kind) == {"other"}
    assert df.problem.str.contains(reason, regex=False).all(), df.problem.tolist()


def test_the_reason_survives_lenient_mode() -> None:
    df = scl.load(COHERE_V1, strict=False)
    assert df.problem.notna().all()


def test_a_provider_error_in_an_unknown_stream_is_still_an_error_row() -> None:
    df = scl.load(sse((None, {"error": {"message": "overloaded"}})))
    assert (df.kind.tolist(), df.problem.tolist()) == (["error"], ["provider error: overloaded"])


def test_a_known_format_has_no_such_reason() -> None:
    df = scl.load(ndjson({"model": "m", "created_at": "t", "message": {"content": "a"},
                          "done": True}))
    assert df.problem.isna().all()



# -- containers saved by mistake: the first line that is no SSE field says what the file is --
_TURN = sse(("message_start", {"type": "message_start", "message": {"id": "m"}}))
CONTAINERS = {
    "UTF-16 text": _TURN.decode().encode("utf-16"),
    "gzip-compressed": __import__("gzip").compress(_TURN, mtime=0),
    "an HTTP status line": b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + _TURN,
    "chunked transfer framing": b"3f\r\n" + _TURN + b"\r\n0\r\n\r\n",
    "an HTML or XML page": _TURN + b"<HTML><body>502 Bad Gateway</body></HTML>\n",
    "a ZIP archive": b"PK\x03\x04\x14\x00\x00\x00",
}


@pytest.mark.parametrize(("reason", "body"), CONTAINERS.items(), ids=list(CONTAINERS))
def test_a_container_saved_by_mistake_is_named_in_any_chunking(reason: str, body: bytes) -> None:
    with pytest.raises(scl.CaptureError, match=reason):
        scl.load(body)
    for size in (1, 7):
        df = scl.load(iter([body[i:i + size] for i in range(0, len(body), size)]), strict=False)
        assert reason in df[df.kind == "error"].problem.iloc[0]


def test_an_html_page_with_no_line_end_is_named_not_called_truncated() -> None:
    df = scl.load(b"<!DOCTYPE html><html><body>502</body></html>", strict=False)
    assert list(df.problem) == [
        "not an SSE field line: '<!DOCTYPE html><html><body>502</body></html>' (an HTML or XML "
        "page (a gateway's error page, a login wall), not an event stream; this and any non-SSE "
        "lines after it)"]


@pytest.mark.parametrize("tail", sorted({f[:n] for f in ("data", "event", "id", "retry")
                                         for n in range(1, len(f) + 1)}))
def test_a_capture_cut_inside_a_field_name_is_called_cut_not_a_container(tail: str) -> None:
    df = scl.load(_TURN + tail.encode(), strict=False)
    (problem,) = df.problem.dropna()
    assert problem.startswith(f"stream ends inside a frame: {len(tail)} bytes")
