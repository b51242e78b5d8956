"""The AI SDK UI message stream: what each chunk means (the contract every format shares is in
``test_formats.py``). Streams written from ``ai``'s chunk schema (``ui-message-chunks.ts``)
and its stream-protocol page, as ``JsonToSseTransformStream`` frames them."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl

from ..support.ui_stream_turns import CALL, SERVER_TOOL, ui
from ..support.wire_samples import KEPT_APART, assert_refused, finished_calls, interleaved


def test_text_parts_have_no_block_and_finish_ends_the_turn() -> None:
    df = scl.load(SERVER_TOOL)
    text = df[df.kind.isin(["text_start", "text_delta"])]
    assert text.block.isna().all() and list(text.fragment.dropna()) == ["It is sunny."]
    assert list(df.event[df.kind == "turn_stop"]) == ["finish", "[DONE]"]
    assert df.reason.dropna().tolist() == ["stop"]
    assert df.call_id[df.event == "tool-output-available"].tolist() == [CALL]


def test_calls_are_keyed_by_id_so_interleaved_fragments_stay_apart() -> None:
    body = ui(*interleaved(
        lambda i, tool: {"type": "tool-input-start", "toolCallId": i, "toolName": tool},
        lambda i, piece: {"type": "tool-input-delta", "toolCallId": i, "inputTextDelta": piece},
        lambda i, tool, args: {"type": "tool-input-available", "toolCallId": i,
                               "toolName": tool, "input": args},
    ), {"type": "finish"})
    assert finished_calls(body) == KEPT_APART


@pytest.mark.parametrize("start", [False, True])
def test_a_call_whose_input_came_in_no_fragment_is_its_input_as_written(start: bool) -> None:
    """A provider that does not stream arguments: ``tool-input-available`` alone (or after a
    start with no delta) carries the call; its fragment is the object as the line has it."""
    chunks = [{"type": "tool-input-start", "toolCallId": "c", "toolName": "f"}] if start else []
    body = ui(*chunks, '{"type":"tool-input-available","toolCallId":"c","toolName":"f",'
                       '"input":{"q":"caf\\u00e9", "n":[1,2]}}', {"type": "finish"})
    (call,) = scl.calls(body).to_dict("records")
    assert call["args"] == '{"q":"caf\\u00e9", "n":[1,2]}' and call["complete"]
    assert call["n_deltas"] == 1 and call["wire_chars"] == len(call["args"])


@pytest.mark.parametrize("given", ['"ls -la"', "[1, 2]", "42", "true"])
def test_an_input_of_any_json_type_is_its_text_as_written(given: str) -> None:
    """``uiMessageChunkSchema`` types ``input`` ``z.unknown()``: a tool whose input schema is
    a string, an array or a number ends with that value (a string's text keeps its quotes);
    a probe read a string as its bare text and anything else as a problem."""
    body = ui('{"type":"tool-input-available","toolCallId":"c","toolName":"f","input":'
              f"{given}}}", {"type": "finish"})
    (call,) = scl.calls(scl.load(body)).to_dict("records")
    assert (call["args"], call["complete"]) == (given, True)


def test_a_text_encoded_calls_string_input_is_its_raw_text() -> None:
    """A call announced with ``inputEncoding: "text"`` takes raw text, not JSON."""
    body = ui({"type": "tool-input-start", "toolCallId": "c", "toolName": "sh",
               "inputEncoding": "text"},
              {"type": "tool-input-available", "toolCallId": "c", "toolName": "sh",
               "input": "ls -la"}, {"type": "finish"})
    (call,) = scl.calls(body).to_dict("records")
    assert call["args"] == "ls -la"


@pytest.mark.parametrize("part", [
    {"type": "data-progress", "id": "p", "data": {"pct": 1}},
    {"type": "file", "url": "https://example.com/a.png", "mediaType": "image/png"}])
def test_a_stream_of_many_data_parts_or_files_is_no_misread(part: dict) -> None:
    """A probe: data parts (a progress part updated by its ``id``) and files are the
    format's own though no signature of it; a stream mostly of them raised as a misread."""
    body = ui({"type": "start"}, *[part] * 5,
              {"type": "tool-input-available", "toolCallId": "c", "toolName": "f",
               "input": {}}, {"type": "finish"})
    df = scl.load(body)
    assert df.problem.isna().all() and scl.calls(df).complete.tolist() == [True]


def test_an_input_error_ends_the_call_with_what_was_streamed() -> None:
    body = ui({"type": "tool-input-start", "toolCallId": "c", "toolName": "f"},
              {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a": tru'},
              {"type": "tool-input-error", "toolCallId": "c", "toolName": "f",
               "input": '{"a": tru', "errorText": "Invalid input for tool f"},
              {"type": "finish"})
    (call,) = scl.calls(body).to_dict("records")
    assert (call["args"], call["complete"], call["valid_json"]) == ('{"a": tru', True, False)


def test_a_turn_cut_before_input_available_leaves_the_call_unfinished() -> None:
    body = ui({"type": "start"},
              {"type": "tool-input-start", "toolCallId": "c", "toolName": "f"},
              {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a":'})
    (call,) = scl.calls(body[: body.index(b"data: [DONE]")]).to_dict("records")
    assert not call["complete"]


def test_a_stream_once_called_unknown_is_read() -> None:
    """``providers/unknown.py`` called this "a Vercel AI SDK UI message stream, not read"."""
    body = ui({"type": "start", "messageId": "m1"},
              {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a"'})
    df = scl.load(body)
    assert set(df.provider) == {"ai-sdk-ui"} and df.problem.isna().all()
    assert scl.calls(body).problem.iloc[0] == ("argument fragment for a call that was never "
                                               "announced")


def test_an_error_chunk_is_the_servers_error() -> None:
    df = scl.load(ui({"type": "start"}, {"type": "error", "errorText": "rate limited"}))
    assert df.problem[df.kind == "error"].tolist() == ["provider error: rate limited"]


@pytest.mark.parametrize(("chunk", "field"), [
    ({"type": "tool-input-delta", "toolCallId": 7, "inputTextDelta": "{"}, "toolCallId"),
    ({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": None}, "inputTextDelta"),
    ({"type": "tool-input-start", "toolCallId": "c", "toolName": ["f"]}, "toolName"),
    ({"type": "text-delta", "id": "t", "delta": 1}, "delta"),
])
def test_a_field_of_the_wrong_type_is_reported(chunk: dict, field: str) -> None:
    body = ui({"type": "start"}, chunk)
    assert_refused(body, f"{field} should be a string")
