"""Type-prefixed lines (``CODE:JSON\\n``, the AI SDK 4 data stream): one frame per line, its
code the event, with its byte offsets, in any chunking, chosen from the bytes alone."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl
from streamcalls_lab.framing import AutoDecoder, decode_any
from streamcalls_lab.framing.jsonarray import JSONArrayDecoder
from streamcalls_lab.framing.ndjson import NDJSONDecoder
from streamcalls_lab.framing.prefixed import PrefixedDecoder, prefixed_line
from streamcalls_lab.framing.sse import SSEDecoder

BODY = b'f:{"messageId":"m"}\n0:"Hi"\n2:[{"x":1}]\n'


def frames(body: bytes, strict: bool = True) -> list:
    return list(decode_any([body], strict=strict))


def test_each_line_is_a_frame_its_code_the_event() -> None:
    assert [(f.offset, f.end, f.event, f.data) for f in frames(BODY)] == [
        (0, 20, "f", '{"messageId":"m"}'), (20, 27, "0", '"Hi"'), (27, 39, "2", '[{"x":1}]')]


def test_any_chunking_gives_the_same_frames() -> None:
    whole = frames(BODY)
    for cut in range(1, len(BODY)):
        assert list(decode_any([BODY[:cut], BODY[cut:]])) == whole, cut
    assert list(decode_any([BODY[i:i + 1] for i in range(len(BODY))])) == whole


def test_crlf_line_ends_and_blank_lines_carry_nothing() -> None:
    assert [(f.offset, f.end, f.data) for f in frames(b'0:"a"\r\n\r\n0:"b"\n')] == [
        (0, 7, '"a"'), (9, 15, '"b"')]


def test_a_colon_inside_the_json_is_the_values() -> None:
    assert [f.data for f in frames(b'0:"a:b"\n')] == ['"a:b"']


def test_a_last_line_of_a_whole_part_needs_no_line_end() -> None:
    assert [f.data for f in frames(b'0:"a"\nd:{"finishReason":"stop"}')] == [
        '"a"', '{"finishReason":"stop"}']


@pytest.mark.parametrize("framing", [PrefixedDecoder, NDJSONDecoder])
def test_a_last_line_nested_deeper_than_orjson_reads_is_whole(framing: type) -> None:
    deep = b"[" * 5000 + b"]" * 5000  # whole JSON, past orjson's 1,024 levels
    line = b"2:" + deep if framing is PrefixedDecoder else b'{"a": ' + deep + b"}"
    dec = framing()
    (frame,) = dec.feed(line) + dec.close()
    assert frame.problem is None and frame.end == len(line)


def test_a_last_line_cut_short_says_what_it_is_not_in_each_line_framing() -> None:
    for framing, line, what in ((PrefixedDecoder, b'2:[[1]', "a whole part"),
                                (NDJSONDecoder, b'{"a": [1', "whole JSON")):
        dec = framing(strict=False)
        (frame,) = dec.feed(line) + dec.close()
        assert frame.problem.endswith(f"are not {what} (truncated capture?)"), framing


def test_a_last_line_cut_short_is_an_error_naming_its_offset() -> None:
    with pytest.raises(scl.CaptureError, match=r"byte 6: stream ends inside a line"):
        frames(b'0:"a"\nc:{"toolCallId":"x","argsTe')


@pytest.mark.parametrize(("body", "where", "why"), [
    (b'0:"a"\nnot a part\n', 6, "not a type-prefixed line"),
    (b'0:"a"\n:"no code"\n', 6, "not a type-prefixed line"),
    (b'0:"a"\n0:"\xff"\n', 9, "invalid UTF-8"),
    (b'0:"a"\n0:"\x00"\n', 9, "NUL byte"),
])
def test_a_line_that_is_no_part_is_an_error_naming_its_offset(
    body: bytes, where: int, why: str,
) -> None:
    with pytest.raises(scl.CaptureError, match=rf"byte {where}: .*{why}"):
        frames(body)
    got = frames(body, strict=False)
    assert [(f.offset, f.problem is None) for f in got] == [(0, True), (where, False)]


def test_a_leading_bom_is_not_content() -> None:
    assert [(f.offset, f.event) for f in frames(b'\xef\xbb\xbf0:"a"\n')] == [(3, "0")]


@pytest.mark.parametrize(("head", "decoder"), [
    *((head, PrefixedDecoder) for head in [
        b'0:"', b'b:{', b"2:[", b'\n\n9:{', b'\xef\xbb\xbf0:"', b"3:\"x\"\n"]),
    *((head, SSEDecoder) for head in [
        b"data: {}\n\n", b"id: 1\n", b"event: x\n", b": ping\n\n", b"retry: 10\n",
        b"e: x\n", b"0 :x\n", b"z:{}\n"]),
    (b'{"a":1}\n', NDJSONDecoder), (b"[{}]", JSONArrayDecoder),
])
def test_auto_reads_only_a_code_a_colon_and_json_as_prefixed_lines(
    head: bytes, decoder: type,
) -> None:
    dec = AutoDecoder(strict=False)
    dec.feed(head)
    assert type(dec.decoder) is decoder


def test_auto_holds_back_what_may_start_a_part_and_nothing_more() -> None:
    dec = AutoDecoder()
    assert dec.feed(b"0") == [] and dec.decoder is None
    assert dec.feed(b":") == [] and dec.decoder is None
    assert [f.data for f in dec.feed(b'"a"\n')] == ['"a"']
    assert type(dec.decoder) is PrefixedDecoder


def test_a_part_cut_in_its_first_bytes_is_said_so() -> None:
    with pytest.raises(scl.CaptureError, match="byte 0: stream ends inside a line"):
        frames(b"0:")


def test_the_writer_writes_what_the_reader_reads() -> None:
    body = (prefixed_line("0", '"a"') + prefixed_line("9", '{"args":{}}')).encode()
    assert [(f.event, f.data) for f in frames(body)] == [("0", '"a"'), ("9", '{"args":{}}')]
    with pytest.raises(ValueError, match="raw line break"):
        prefixed_line("0", '"a\nb"')
