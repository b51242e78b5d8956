"""Bedrock InvokeModelWithResponseStream: base64-wrapped model events in AWS event-stream."""

from __future__ import annotations

import base64
import json

import pytest

import streamcalls_lab as scl

from ..support.wire_samples import (
    WEATHER,
    call_triples,
    claude_events,
    invoke,
    invoke_chunk,
    llama_events,
    mistral_events,
    nova_events,
    rows_of,
    titan_events,
)


def test_claude_events_inside_read_as_anthropic_messages_do() -> None:
    events = claude_events()
    inside = scl.load(invoke(*events))
    alone = scl.load("".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
                             for e in events).encode())
    cols = ["event", "kind", "block", "call_id", "tool", "fragment", "chars", "wire_chars"]
    assert inside[cols].equals(alone[cols])


def test_offsets_point_at_the_outer_message() -> None:
    body = invoke(*claude_events()[:3])
    first = len(invoke_chunk(claude_events()[0]))
    second = first + len(invoke_chunk(claude_events()[1]))
    assert scl.load(body).offset.tolist() == [0, first, second]


def test_claude_calls_are_whole_and_complete() -> None:
    out = scl.calls(invoke(*claude_events()))
    assert list(zip(out.tool, out.args, strict=True)) == [(n, "".join(f)) for _, n, f in WEATHER]
    assert out.complete.all()


def test_the_stop_carrying_invocation_metrics_is_still_the_turn_stop() -> None:
    assert rows_of(invoke(*claude_events()))[-1] == ("message_stop", "turn_stop", None, "-")


def test_nova_events_inside_read_as_converse_stream_does() -> None:
    rows = rows_of(invoke(*nova_events()))
    _, name, fragments = WEATHER[0]
    assert [r[1] for r in rows] == ["other", "text_delta", "block_stop", "call_start",
                                    "args_delta", "block_stop", "turn_stop", "other"]
    assert rows[4][3] == "".join(fragments)
    assert scl.calls(invoke(*nova_events())).tool.tolist() == [name]


@pytest.mark.parametrize("events, text", [
    (llama_events(), "Paris is mild."), (titan_events(), "Paris is mild."),
    (mistral_events(), "Paris is mild."),
], ids=["llama", "titan", "mistral"])
def test_text_families_give_their_text_and_a_turn_stop(events: list, text: str) -> None:
    df = scl.load(invoke(*events))
    assert "".join(df.fragment[df.kind == "text_delta"]) == text
    assert df.kind.tolist()[-1] == "turn_stop" and df.problem.isna().all()


def test_a_ping_before_claudes_first_event_is_read_as_anthropic() -> None:
    rows = rows_of(invoke({"type": "ping"}, *claude_events()))
    assert rows[0] == ("ping", "other", None, "-")
    assert scl.load(invoke({"type": "ping"})).problem.isna().all()


def test_openai_compatible_chunks_read_as_chat_completions() -> None:
    chunks = [{"id": "c1", "object": "chat.completion.chunk", "model": "openai.gpt-oss-120b",
               "choices": [{"index": 0, "delta": d, "finish_reason": f}]} for d, f in [
        ({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                               "function": {"name": "f", "arguments": ""}}]},
         None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}, None),
        ({}, "tool_calls")]]
    out = scl.calls(invoke(*chunks))
    assert list(zip(out.call_id, out.tool, out.args, out.complete, strict=True)) == [
        ("call_1", "f", '{"a": 1}', True)]


def test_a_chunk_of_an_unknown_family_is_other_and_says_why() -> None:
    row = scl.load(invoke({"completions": [{"data": {"text": "hi"}}]})).iloc[0]
    assert row.kind == "other" and "model family this kit does not read" in row.problem
    assert "completions" in row.problem


def test_an_exception_is_a_provider_error_row_in_strict_mode_too() -> None:
    body = invoke(*claude_events()[:3], exception=("modelStreamErrorException", "boom"))
    row = scl.load(body).iloc[-1]
    assert (row.kind, row.problem) == ("error", "provider error: modelStreamErrorException: boom")


def test_bytes_that_are_not_base64_name_the_outer_message() -> None:
    good = invoke_chunk(claude_events()[0])
    from streamcalls_lab.framing.eventstream import event_message
    body = good + event_message("chunk", b'{"bytes": "not base64!"}')
    with pytest.raises(scl.CaptureError, match=rf"byte {len(good)}: .*base64"):
        scl.load(body)


def test_inner_text_that_is_not_json_is_a_problem_in_lenient_mode() -> None:
    body = invoke(claude_events()[0], "{not json")
    row = scl.load(body, strict=False).iloc[-1]
    assert row.kind == "error" and "chunk.bytes" in row.problem


def test_wire_chars_are_measured_in_the_inner_json() -> None:
    df = scl.load(invoke(*claude_events([("c", "f", ['{"q": "a\\"b"}'])])))
    frag = df[(df.kind == "args_delta") & (df.chars > 0)].iloc[0]
    assert frag.wire_chars == len(json.dumps(frag.fragment)) - 2


# -- the independent reference ---------------------------------------------------------------


def sdk_calls(body: bytes) -> list[tuple[str, str, str]]:
    """(id, name, arguments) of each tool_use block as the anthropic SDK's Bedrock client reads
    the stream: botocore's event-stream decoder, its own base64 unwrapping and accumulator."""
    anthropic = pytest.importorskip("anthropic")
    import httpx2

    def serve(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={
            "content-type": "application/vnd.amazon.eventstream"}, content=body)

    client = anthropic.AnthropicBedrock(
        api_key="fake-bedrock-bearer", aws_region="us-east-1",  # a bearer key: no signing
        base_url="http://sdk-reference.invalid", max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(serve)))
    with client.messages.stream(model="anthropic.claude-sonnet-4", max_tokens=1,
                                messages=[{"role": "user", "content": "x"}]) as stream:
        for _ in stream:
            pass
        bufs: dict[int, bytes] = stream._MessageStream__json_bufs
        message = stream.get_final_message()
    return [(b.id, b.name, bufs.get(i, b"").decode()) for i, b in enumerate(message.content)
            if b.type == "tool_use"]


@pytest.mark.parametrize("calls", [WEATHER, [("c", "f", [])],
                                   [("c", "f", ['{"s": "\\u00e9', '\\n\\"q\\""}'])]],
                         ids=["two", "no-args", "escapes"])
def test_the_anthropic_bedrock_client_reads_the_same_calls(calls: list) -> None:
    body = invoke(*claude_events(calls))
    assert call_triples(scl.calls(body)) == sdk_calls(body)


def test_the_wrapper_round_trips() -> None:
    """The sample's payload is what Bedrock documents: base64 of the model's JSON."""
    from streamcalls_lab.framing import decode_any

    [frame] = list(decode_any([invoke_chunk({"type": "ping"})]))
    assert json.loads(base64.b64decode(json.loads(frame.data)["bytes"])) == {"type": "ping"}


def botocore_inner_events(body: bytes) -> list[dict]:
    """The model's events as botocore reads them: its own event-stream decoder, Bedrock's
    service model (the ``ResponseStream`` shape) and base64 handling."""
    pytest.importorskip("botocore")
    from botocore.eventstream import EventStreamBuffer
    from botocore.loaders import Loader
    from botocore.model import ServiceModel
    from botocore.parsers import EventStreamJSONParser

    shape = ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2")) \
        .shape_for("ResponseStream")
    buf, parser, out = EventStreamBuffer(), EventStreamJSONParser(), []
    buf.add_data(body)
    for message in buf:
        parsed = parser.parse(message.to_response_dict(), shape)
        if "chunk" in parsed:
            out.append(json.loads(parsed["chunk"]["bytes"]))
    return out


def test_botocore_reads_the_same_nova_call() -> None:
    body = invoke(*nova_events())
    events = botocore_inner_events(body)
    starts = [e["contentBlockStart"]["start"]["toolUse"] for e in events
              if "toolUse" in e.get("contentBlockStart", {}).get("start", {})]
    inputs = "".join(e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events
                     if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {}))
    assert call_triples(scl.calls(body)) == [(starts[0]["toolUseId"], starts[0]["name"], inputs)]


@pytest.mark.parametrize("events", [llama_events(), titan_events(), mistral_events()],
                         ids=["llama", "titan", "mistral"])
def test_botocore_reads_the_same_text(events: list) -> None:
    body = invoke(*events)
    inner = botocore_inner_events(body)
    text = "".join(e.get("generation") or e.get("outputText") or
                   "".join(o["text"] for o in e.get("outputs", [])) for e in inner)
    df = scl.load(body)
    assert "".join(df.fragment[df.kind == "text_delta"]) == text
