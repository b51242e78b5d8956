"""NDJSON framing: one frame per line, with its byte offsets, chosen from the bytes."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl
from streamcalls_lab.framing import AutoDecoder, decode_any
from streamcalls_lab.framing.ndjson import EVENT, NDJSONDecoder
from streamcalls_lab.framing.sse import SSEDecoder


def frames(body: bytes, strict: bool = True) -> list:
    return list(decode_any([body], strict=strict))


def test_each_line_is_a_frame_bounded_by_its_offsets() -> None:
    body = b'{"a":1}\n{"b":2}\n'
    assert [(f.offset, f.end, f.event, f.data) for f in frames(body)] == [
        (0, 8, EVENT, '{"a":1}'), (8, 16, EVENT, '{"b":2}')]


def test_crlf_line_ends_are_not_part_of_the_data() -> None:
    assert [(f.offset, f.end, f.data) for f in frames(b'{"a":1}\r\n{}\r\n')] == [
        (0, 9, '{"a":1}'), (9, 13, "{}")]


def test_blank_lines_carry_nothing() -> None:
    assert [f.offset for f in frames(b'{}\n\n  \n{}\n')] == [0, 7]


def test_a_last_line_of_whole_json_needs_no_line_end() -> None:
    assert [f.data for f in frames(b'{}\n{"done":true}')] == ["{}", '{"done":true}']


def test_lenient_mode_reports_a_bad_line_and_goes_on() -> None:
    got = frames(b'{}\n{"a":"\xff"}\n{"b":1}\n', strict=False)
    assert [(f.offset, f.problem is None) for f in got] == [(0, True), (9, False), (13, True)]


def test_a_line_that_is_not_json_is_an_error_naming_its_offset() -> None:
    body = b'{"model":"m","created_at":"t","message":{"content":"a"},"done":false}\n{oops\n'
    with pytest.raises(scl.CaptureError, match=rf"byte {body.index(b'{oops')}: invalid JSON"):
        scl.load(body)


def test_a_leading_bom_is_not_content() -> None:
    assert [(f.offset, f.data) for f in frames(b'\xef\xbb\xbf{}\n')] == [(3, "{}")]


@pytest.mark.parametrize(("head", "decoder"), [
    *((head, NDJSONDecoder) for head in [b"{", b"  \n{", b"\xef\xbb\xbf{", b"\r\n\t {"]),
    *((head, SSEDecoder) for head in [
        b"data: {}\n\n", b"\n\nevent: x\n", b": ping\n\n", b"<html>"]),
])
def test_auto_reads_a_json_object_first_as_ndjson_and_anything_else_as_sse(
    head: bytes, decoder: type,
) -> None:
    dec = AutoDecoder()
    dec.feed(head)
    assert isinstance(dec.decoder, decoder)


def test_auto_holds_back_only_leading_whitespace() -> None:
    dec = AutoDecoder()
    assert dec.feed(b"\n \n") == [] and dec.decoder is None
    assert [f.data for f in dec.feed(b'{"a":1}\n')] == ['{"a":1}']


def test_whitespace_alone_is_reported_as_sse_does() -> None:
    dec, sse = AutoDecoder(strict=False), SSEDecoder(strict=False)
    assert dec.feed(b"\n\n") + dec.close() == sse.feed(b"\n\n") + sse.close()


def test_every_split_gives_the_same_frames_and_problems() -> None:
    body = b'\n{"a":"\xc3\xa9"}\r\n{"b":\xff}\n\n{"c":[1,\n'
    whole = frames(body, strict=False)
    for cut in range(1, len(body)):
        assert list(decode_any([body[:cut], body[cut:]], strict=False)) == whole, cut


def test_a_pretty_printed_document_is_reported_once_and_not_read_further() -> None:
    body = b'{\n  "log": {\n    "entries": []\n  }\n}\n'
    got = frames(body, strict=False)
    assert len(got) == 1 and "pretty-printed JSON document" in got[0].problem
    assert got[0].offset == 0
