"""Bedrock ConverseStream normalised to the contract's kinds, one behaviour per test."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import streamcalls_lab as scl
from streamcalls_lab.loader import load_captures
from streamcalls_lab.providers import READERS as FORMATS
from streamcalls_lab.sources import resolve

from ..support.eventstream_turns import REAL, each_real, event, exception, real
from ..support.sse_turns import assert_refused_naming, call_start_at, kinds, providers


def bedrock(*events: tuple[str, object]) -> bytes:
    """A ConverseStream body: each event's payload with the real stream's ``p`` padding."""
    out = b""
    for name, payload in events:
        data = payload if isinstance(payload, str) else json.dumps({**payload, "p": "abcd"})
        out += event(name, data)
    return out


START = ("messageStart", {"role": "assistant"})
TOOL = ("contentBlockStart", {"contentBlockIndex": 1, "start": {
    "toolUse": {"toolUseId": "tooluse_1", "name": "lookup"}}})
STOP = ("contentBlockStop", {"contentBlockIndex": 1})


def args(fragment: object, block: object = 1) -> tuple[str, dict]:
    return ("contentBlockDelta", {"contentBlockIndex": block,
                                  "delta": {"toolUse": {"input": fragment}}})


def text(fragment: str, block: int = 0) -> tuple[str, dict]:
    return ("contentBlockDelta", {"contentBlockIndex": block, "delta": {"text": fragment}})


def test_bedrock_is_registered() -> None:
    assert "bedrock-converse" in FORMATS


def test_bedrock_is_detected() -> None:
    assert providers(bedrock(START)) == {"bedrock-converse"}


def test_tool_use_start_is_a_call_start_with_id_and_name() -> None:
    assert call_start_at(bedrock(START, TOOL), 1) == ("call_start", 1, "tooluse_1", "lookup")


def test_tool_input_is_an_args_fragment_exactly_as_sent() -> None:
    fragment = '{"q": "caf\u00e9'
    row = scl.load(bedrock(START, TOOL, args(fragment))).iloc[2]
    assert (row.kind, row.block, row.fragment, row.chars) == ("args_delta", 1, fragment, 11)


def test_tool_input_wire_chars_count_the_escapes() -> None:
    row = scl.load(bedrock(START, TOOL, args('{"q":"\u00e9"}'))).iloc[2]
    assert row.wire_chars == len(json.dumps('{"q":"\u00e9"}')) - 2  # \" four times, \u00e9


def test_text_is_a_text_delta_without_a_start() -> None:
    assert kinds(bedrock(START, text("Hi"), ("contentBlockStop", {"contentBlockIndex": 0}))) == [
        "other", "text_delta", "block_stop"]


def test_text_wire_chars_count_the_escapes() -> None:
    row = scl.load(bedrock(text('say "hi"'))).iloc[0]
    assert (row.fragment, row.wire_chars) == ('say "hi"', 10)


def test_reasoning_is_other() -> None:
    body = bedrock(("contentBlockDelta", {"contentBlockIndex": 0,
                                          "delta": {"reasoningContent": {"text": "hmm"}}}))
    row = scl.load(body).iloc[0]
    assert (row.kind, row.block) == ("other", 0)


def test_a_tool_result_block_is_other() -> None:
    body = bedrock(("contentBlockStart", {"contentBlockIndex": 2, "start": {
        "toolResult": {"toolUseId": "tooluse_1", "status": "success"}}}))
    assert kinds(body) == ["other"]


def test_content_block_stop_is_a_block_stop() -> None:
    row = scl.load(bedrock(START, TOOL, STOP)).iloc[2]
    assert (row.kind, row.block) == ("block_stop", 1)


def test_message_stop_is_the_turn_stop_and_metadata_is_other() -> None:
    body = bedrock(("messageStop", {"stopReason": "tool_use"}),
                   ("metadata", {"usage": {"inputTokens": 1}, "metrics": {"latencyMs": 5}}))
    assert kinds(body) == ["turn_stop", "other"]


def test_an_exception_is_a_provider_error_row_in_strict_mode_too() -> None:
    df = scl.load(bedrock(START) + exception("throttlingException", "Too many requests"))
    row = df.iloc[1]
    assert (row.provider, row.event, row.kind) == ("bedrock-converse", "throttlingException",
                                                   "error")
    assert row.problem == "provider error: throttlingException: Too many requests"


def test_an_exception_first_shows_the_format() -> None:
    row = scl.load(exception("validationException", "bad model")).iloc[0]
    assert (row.provider, row.kind) == ("bedrock-converse", "error")


def test_calls_joins_the_fragments_of_a_call() -> None:
    body = bedrock(START, TOOL, args('{"city":'), args(' "Paris"}'), STOP,
                   ("messageStop", {"stopReason": "tool_use"}))
    call = scl.calls(body).iloc[0]
    assert (call.call_id, call.tool, call.args, call.n_deltas, call.complete) == (
        "tooluse_1", "lookup", '{"city": "Paris"}', 2, True)


def test_a_call_cut_off_before_its_stop_is_not_complete() -> None:
    assert not scl.calls(bedrock(START, TOOL, args("{"))).iloc[0].complete


WRONG_TYPES = {
    "index as a string": (bedrock(args("{", block="1")),
                          "contentBlockIndex should be an integer, not str"),
    "index beyond 64 bits": (bedrock(args("{", block=2**63)),
                             "contentBlockIndex should fit in 64 bits"),
    "input as an object": (bedrock(args({"a": 1})), "input should be a string, not dict"),
    "text as null": (bedrock(("contentBlockDelta", {"contentBlockIndex": 0,
                                                    "delta": {"text": None}})),
                     "text should be a string, not NoneType"),
    "delta as a string": (bedrock(("contentBlockDelta", {"contentBlockIndex": 0,
                                                         "delta": "text"})),
                          "delta should be an object, not str"),
    "start as a list": (bedrock(("contentBlockStart", {"contentBlockIndex": 0, "start": []})),
                        "start should be an object, not list"),
    "toolUseId as a number": (bedrock(("contentBlockStart", {"contentBlockIndex": 0, "start": {
        "toolUse": {"toolUseId": 7, "name": "f"}}})), "toolUseId should be a string, not int"),
    "stop index as a float": (bedrock(("contentBlockStop", {"contentBlockIndex": 1.0})),
                              "contentBlockIndex should be an integer, not float"),
}


@pytest.mark.parametrize(("body", "reason"), WRONG_TYPES.values(), ids=WRONG_TYPES)
def test_a_field_of_the_wrong_type_is_an_error_naming_the_field(body: bytes, reason: str) -> None:
    assert_refused_naming(bedrock(START) + body, reason)


def test_a_missing_field_is_an_error() -> None:
    body = bedrock(START, ("contentBlockDelta", {"delta": {"text": "x"}}))
    assert "contentBlockIndex" in scl.load(body, strict=False).problem.dropna().iloc[0]


def test_a_payload_that_is_not_json_is_an_error() -> None:
    with pytest.raises(scl.CaptureError, match="invalid JSON in data"):
        scl.load(bedrock(START, ("metadata", "{not json")))


def test_a_problem_in_the_framing_is_an_error_row_in_lenient_mode() -> None:
    body = bedrock(START, TOOL)
    df = scl.load(body[:-3], strict=False)
    assert list(df.kind.astype(str)) == ["other", "error"]
    assert "stream ends inside a message" in df.problem.iloc[1]


def test_any_chunking_loads_the_same_rows() -> None:
    body = bedrock(START, TOOL, args('{"a":'), args("1}"), STOP)
    one_by_one = scl.load([body[i : i + 1] for i in range(len(body))], name="t")
    assert one_by_one.equals(scl.load(body, name="t"))


def test_a_directory_loads_eventstream_files_and_not_their_decoded_jsonl(tmp_path: Path) -> None:
    (tmp_path / "turn.eventstream").write_bytes(bedrock(START, TOOL))
    (tmp_path / "turn.decoded.jsonl").write_text('{"messageStart": {"role": "assistant"}}\n')
    df = scl.load(tmp_path)
    assert (set(df.turn), len(df)) == ({"turn"}, 2)


# -- the real captures ----------------------------------------------------------------------


@real
def test_every_real_capture_loads_without_a_problem() -> None:
    df = scl.load(REAL[0].parent)
    assert set(df.turn) == {p.name.removesuffix(".eventstream") for p in REAL}
    assert set(df.provider) == {"bedrock-converse"} and not (df.kind == "error").any()


@real
def test_the_real_captures_load_the_same_without_the_fast_path() -> None:
    caps = resolve(REAL[0].parent)
    assert load_captures(caps).equals(load_captures(caps, bulk=False))


@each_real
def test_real_capture_calls_are_complete_and_parse(path: Path) -> None:
    calls = scl.calls(path)
    assert calls.complete.all()
    for raw in calls.args:
        json.loads(raw)


@each_real
def test_real_capture_args_equal_the_inputs_in_the_decoded_jsonl(path: Path) -> None:
    decoded = path.with_name(path.name.removesuffix(".eventstream") + ".decoded.jsonl")
    inputs: dict[int, str] = {}
    for line in decoded.read_text().splitlines():
        payload = json.loads(line).get("contentBlockDelta", {})
        if "toolUse" in payload.get("delta", {}):
            block = payload["contentBlockIndex"]
            inputs[block] = inputs.get(block, "") + payload["delta"]["toolUse"]["input"]
    calls = scl.calls(path)
    assert dict(zip(calls.block, calls.args, strict=True)) == inputs


@real
def test_real_tool_input_fragments_are_measured() -> None:
    deltas = scl.load(REAL[0].parent)
    sizes = deltas[deltas.kind == "args_delta"].chars
    assert len(sizes) == len(scl.calls(deltas)) > 0  # Nova sends each call's input whole
    assert statistics.median(sizes) > 0


# -- the same events as the AWS SDKs hand them over, logged one JSON object per line --------
def sdk_log(*events: tuple[str, dict]) -> bytes:
    """``{"<event>": {...}}`` per line: how a JSON-lines log of a boto3 stream holds them."""
    return "".join(json.dumps({name: payload}) + "\n" for name, payload in events).encode()


SDK_TURN = (START, TOOL, args('{"q": '), args('"caf\u00e9"}'), STOP,
            ("messageStop", {"stopReason": "tool_use"}))


def test_an_sdk_log_reads_as_the_event_stream_it_came_from() -> None:
    cols = ["event", "kind", "block", "call_id", "tool", "fragment"]
    logged = scl.load(sdk_log(*SDK_TURN))
    wire = scl.load(bedrock(*SDK_TURN))
    assert set(logged.provider) == {"bedrock-converse"}
    assert logged[cols].equals(wire[cols])
    assert list(scl.calls(logged).args) == ['{"q": "caf\u00e9"}']


def test_an_exception_in_an_sdk_log_is_a_provider_error_row() -> None:
    df = scl.load(sdk_log(START, ("throttlingException", {"message": "slow down"})))
    assert df.iloc[-1].kind == "error" and "throttlingException: slow down" in df.iloc[-1].problem


def test_a_lone_key_with_no_event_object_is_not_taken_for_bedrock() -> None:
    assert providers(sdk_log(("metadata", 5))) == {"unknown"}  # type: ignore[arg-type]


@pytest.mark.captures
def test_every_real_sdk_log_gives_the_rows_of_its_event_stream_twin(captures: Path) -> None:
    logs = sorted((captures / "bedrock").glob("*.decoded.jsonl"))
    if not logs:
        pytest.skip("no decoded Bedrock logs")
    cols = ["event", "kind", "block", "call_id", "tool", "fragment", "wire_chars"]
    for log in logs:
        twin = log.with_name(log.name.replace(".decoded.jsonl", ".eventstream"))
        got, want = scl.load(log), scl.load(twin)
        assert got[cols].reset_index(drop=True).equals(want[cols].reset_index(drop=True)), log
