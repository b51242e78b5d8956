"""The AI SDK 4 data stream: what each part means (the contract every format shares is in
``test_formats.py``). Streams written from ``@ai-sdk/ui-utils``' ``dataStreamParts`` and
``formatDataStreamPart`` (``CODE:JSON\\n``); the v4 client (``callChatApi`` with
``streamProtocol: 'data'``) reads these streams to the same calls (checked by hand: the
package is not installed here)."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl

from ..support.data_stream_turns import STEP, USAGE, WEATHER, WHO, parts
from ..support.wire_samples import (
    KEPT_APART,
    assert_chunking_changes_nothing,
    assert_refused,
    call_triples,
    finished_calls,
    interleaved,
    rows_of,
)


def test_a_tool_call_nothing_announced_is_the_whole_call() -> None:
    """AI SDK 4 streams no argument deltas unless toolCallStreaming is on."""
    body = parts(STEP, ("9", {**WHO, "args": {"city": "Paris", "days": 3}}),
                 ("d", {"finishReason": "tool-calls", "usage": USAGE}))
    table = scl.calls(body)
    assert call_triples(table) == [("call_1", "get_weather", '{"city":"Paris","days":3}')]
    assert table.complete.all() and table.n_deltas.tolist() == [1]


def test_calls_open_at_once_are_kept_apart_by_id() -> None:
    body = parts(*interleaved(
        lambda i, tool: ("b", {"toolCallId": i, "toolName": tool}),
        lambda i, piece: ("c", {"toolCallId": i, "argsTextDelta": piece}),
        lambda i, tool, args: ("9", {"toolCallId": i, "toolName": tool, "args": args}),
    ), ("d", {"finishReason": "tool-calls"}))
    assert finished_calls(body) == KEPT_APART


def test_a_call_the_stream_never_ends_stays_unfinished() -> None:
    body = parts(("b", WHO), ("c", {"toolCallId": "call_1", "argsTextDelta": '{"ci'}))
    assert not scl.calls(body, strict=False).complete.any()


def test_text_is_measured_as_it_stood_escaped() -> None:
    df = scl.load(parts(("0", 'say "hi"\n')))
    assert (df.fragment.tolist(), df.wire_chars.tolist()) == (['say "hi"\n'], [12])


def test_an_error_part_is_the_servers_error() -> None:
    df = scl.load(parts(STEP, ("3", "An error occurred.")))
    assert df.problem[df.kind == "error"].tolist() == ["provider error: An error occurred."]


@pytest.mark.parametrize(("code", "value"), [
    ("2", [{"weather": "sunny"}]), ("8", [{"id": "note"}]), ("g", "thinking"),
    ("h", {"sourceType": "url", "id": "s", "url": "https://example.com"}),
    ("i", {"data": "xyz"}), ("j", {"signature": "sig"}),
    ("k", {"data": "aGk=", "mimeType": "text/plain"}),
])
def test_data_annotations_reasoning_sources_and_files_are_other(code: str, value: object) -> None:
    assert [r[1] for r in rows_of(parts(STEP, (code, value)))] == ["other", "other"]


@pytest.mark.parametrize(("line", "why"), [
    (b'6:{"tool_call":{}}\n', "'6' is no part of the AI SDK 4 data stream"),
    (b'0:["not text"]\n', "a text part's value should be a str"),
    (b'c:{"toolCallId":"a","argsTextDelta":5}\n', "argsTextDelta should be a string"),
    (b'9:{"toolCallId":"a","toolName":"f","args":"{}"}\n', "args should be an object"),
])
def test_a_part_of_the_wrong_shape_is_reported(line: bytes, why: str) -> None:
    body = parts(STEP) + line
    assert_refused(body, rf"byte {len(parts(STEP))}: .*{why}")


def test_it_is_not_read_as_any_other_format() -> None:
    assert set(scl.load(WEATHER).provider) == {"ai-sdk-data"}


def test_a_documented_stream_reads_the_same_in_any_chunking() -> None:
    assert_chunking_changes_nothing(WEATHER)


@pytest.mark.parametrize(("stream", "args"), [
    (parts(("b", WHO), ("c", {"toolCallId": "call_1", "argsTextDelta": ""}),
           ("9", {**WHO, "args": {}})), ""),  # no text streamed: {} is the SDK's reading
    (parts(("9", {**WHO, "args": {}})), "{}"),  # nothing streamed: the call as sent
    (parts(("b", WHO), ("9", {**WHO, "args": {"city": "Paris"}})),
     '{"city":"Paris"}'),  # announced, never filled (a v5 stream bridged to v4)
])
def test_a_call_no_fragment_filled_takes_its_text_from_what_was_sent(
    stream: bytes, args: str,
) -> None:
    table = scl.calls(stream)
    assert table.args.tolist() == [args] and table.complete.all()


def test_redaction_keeps_each_parts_code_and_fills_a_line_that_is_no_part() -> None:
    from streamcalls_lab.redact import Redactor

    body = WEATHER + b"Paris is not a part\n"
    out = Redactor("s").capture(body)
    assert len(out) == len(body) and b"Paris" not in out
    assert [line[:2] for line in out.splitlines()[:-1]] == [
        line[:2] for line in body.splitlines()[:-1]]
