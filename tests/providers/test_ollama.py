"""Ollama's native ``/api/chat`` stream (NDJSON) normalised to the contract's kinds."""

from __future__ import annotations

import json

import orjson
import pytest

import streamcalls_lab as scl

from ..support.wire_samples import (
    assert_chunking_changes_nothing,
    ndjson,
    ollama_call,
    ollama_line,
    ollama_turn,
    rows_of,
)


def test_content_is_text_and_done_is_the_turn_stop() -> None:
    body = ndjson(ollama_line("Bon"), ollama_line("jour"), ollama_line(done=True))
    assert rows_of(body) == [("chunk", "text_delta", None, "Bon"),
                           ("chunk", "text_delta", None, "jour"),
                           ("done", "turn_stop", None, "-")]


def test_thinking_alone_is_other() -> None:
    assert rows_of(ndjson(ollama_line(thinking="hmm"))) == [("chunk", "other", None, "-")]


def test_each_whole_call_is_announced_given_its_arguments_and_stopped() -> None:
    line = ollama_line(tool_calls=[ollama_call("f", {"a": 1}), ollama_call("g", {})])
    assert rows_of(ndjson(line)) == [
        ("chunk", "call_start", 0, "-"), ("chunk", "args_delta", 0, '{"a":1}'),
        ("chunk", "block_stop", 0, "-"), ("chunk", "call_start", 1, "-"),
        ("chunk", "args_delta", 1, "{}"), ("chunk", "block_stop", 1, "-")]


def test_calls_are_numbered_across_lines_in_order_of_arrival() -> None:
    body = ndjson(ollama_line(tool_calls=[ollama_call("f", {})]),
                  ollama_line(tool_calls=[ollama_call("g", {}, index=0)]), ollama_line(done=True))
    assert list(scl.calls(body).block) == [0, 1]


def test_the_arguments_are_the_object_exactly_as_written() -> None:
    raw = ('{"model":"m","created_at":"t","message":{"role":"assistant","content":"",'
           '"tool_calls":[{"function":{"name":"f","arguments":{ "b" : 2.50, "a":"\\u00e9"}}}]},'
           '"done":false}')
    out = scl.calls(ndjson(raw, ollama_line(done=True)))
    assert out.args.tolist() == ['{ "b" : 2.50, "a":"\\u00e9"}'] and out.valid_json.all()


def test_an_id_is_the_call_id() -> None:
    body = ndjson(ollama_line(tool_calls=[ollama_call("f", {}, call_id="call_7")]))
    assert scl.calls(body).call_id.tolist() == ["call_7"]


def test_arguments_sent_as_a_string_are_the_fragment() -> None:
    args = '{"a": "x\\"y"}'
    frag = scl.load(ndjson(ollama_line(tool_calls=[ollama_call("f", args)]))).iloc[1]
    assert (frag.kind, frag.fragment, frag.wire_chars) == ("args_delta", args,
                                                           len(json.dumps(args)) - 2)


def test_generate_responses_are_text() -> None:
    body = ndjson({"model": "m", "created_at": "t", "response": "Hi", "done": False},
                  {"model": "m", "created_at": "t", "response": "", "done": True})
    assert [r[1] for r in rows_of(body)] == ["text_delta", "turn_stop"]


def test_an_error_line_is_a_provider_error_row_in_strict_mode_too() -> None:
    body = ndjson(ollama_line("a"), {"error": "model runner has unexpectedly stopped"})
    row = scl.load(body).iloc[-1]
    assert (row.kind, row.problem) == ("error", "provider error: model runner has unexpectedly "
                                                "stopped")


def test_a_call_of_the_wrong_shape_names_its_line() -> None:
    body = ndjson(ollama_line("a"), ollama_line(tool_calls=[{"function": {"name": 5}}]))
    at = body.index(b"\n") + 1
    with pytest.raises(scl.CaptureError, match=rf"byte {at}: .*name should be a string"):
        scl.load(body)


def test_a_problem_line_numbers_no_call() -> None:
    body = ndjson(ollama_line(tool_calls=[ollama_call("f", {}), {"function": {"name": 5}}]),
                  ollama_line(tool_calls=[ollama_call("g", {})]))
    df = scl.load(body, strict=False)
    assert df[df.kind == "call_start"].block.tolist() == [0]


def test_a_turn_cut_off_before_done_has_no_turn_stop() -> None:
    assert "turn_stop" not in [r[1] for r in rows_of(ndjson(*ollama_turn()[:-1]))]


def test_chunking_changes_nothing_for_a_broken_stream_either() -> None:
    body = ndjson(*ollama_turn()[:2], "{not json", *ollama_turn()[2:])[:-9]
    assert_chunking_changes_nothing(body, strict=False)


# -- the independent reference ---------------------------------------------------------------


def sdk_stream(body: bytes) -> tuple[list[tuple[str, dict]], str]:
    """(name, arguments) per call and the answer text, as the ollama SDK reads the stream:
    its own HTTP client (an in-memory transport), line reader and types."""
    ollama = pytest.importorskip("ollama")
    import httpx

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/x-ndjson"},
                              content=body)

    client = ollama.Client(host="http://sdk-reference.invalid",
                           transport=httpx.MockTransport(serve))
    calls, text = [], []
    for part in client.chat(model="qwen3:8b", messages=[{"role": "user", "content": "x"}],
                            stream=True):
        text.append(part.message.content or "")
        for tc in part.message.tool_calls or []:
            calls.append((tc.function.name, dict(tc.function.arguments)))
    return calls, "".join(text)


@pytest.mark.parametrize("lines", [
    ollama_turn(),
    [ollama_line("Par"), ollama_line("is"), ollama_line(done=True)],
    [ollama_line(tool_calls=[ollama_call("f", {"n": [1, 2.5, None], "s": "é\n\"x\""})]),
     ollama_line(tool_calls=[ollama_call("g", {"deep": {"k": {}}})]), ollama_line(done=True)],
], ids=["thinking-and-calls", "text", "nested-and-escapes"])
def test_the_ollama_sdk_reads_the_same_calls_and_text(lines: list[dict]) -> None:
    body = ndjson(*lines)
    calls, text = sdk_stream(body)
    out = scl.calls(body)
    assert [(t, orjson.loads(a)) for t, a in zip(out.tool, out.args, strict=True)] == calls
    df = scl.load(body)
    assert "".join(df.fragment[df.kind == "text_delta"]) == text


def test_a_directory_loads_ndjson_captures(tmp_path) -> None:
    (tmp_path / "turn.ndjson").write_bytes(ndjson(*ollama_turn()))
    df = scl.load(tmp_path)
    assert set(df.turn) == {"turn"} and set(df.provider) == {"ollama"}
