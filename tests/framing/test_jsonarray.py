"""jsonarray: Gemini's streamed JSON array (no ``?alt=sse``) read element by element."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcalls_lab as scl
from streamcalls_lab.errors import CaptureError
from streamcalls_lab.framing import AutoDecoder, decode_any
from streamcalls_lab.framing.jsonarray import EVENT, JSONArrayDecoder
from streamcalls_lab.loader import load_captures
from streamcalls_lab.sources import resolve

from ..conftest import CAPTURES
from ..support.sse_turns import sse

REAL = sorted((CAPTURES / "gemini").glob("*.json"))
CALL = {"candidates": [{"content": {"role": "model", "parts": [
    {"functionCall": {"name": "get_weather", "args": {"city": "K\u00f8benhavn", "q": "a]}\""}}}]},
    "index": 0}]}
STOP = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 3}}


def array(*elements: object, sep: str = "\r\n,\r\n", indent: int | None = 2) -> bytes:
    """A streamed array as Gemini writes one: pretty elements, CRLF-comma separators."""
    return ("[" + sep.join(json.dumps(e, indent=indent, ensure_ascii=False) for e in elements)
            + "]").encode()


BODY = array(CALL, STOP)


def frames_of(body: bytes, size: int | None = None, *, strict: bool = True) -> list:
    pieces = [body] if size is None else [body[i:i + size] for i in range(0, len(body), size)]
    dec = JSONArrayDecoder("t.json", strict=strict)
    out = []
    for p in pieces:
        out += dec.feed(p)
    return out + dec.close()


def test_each_element_is_one_frame_holding_its_exact_text() -> None:
    frames = frames_of(BODY)
    assert [json.loads(f.data) for f in frames] == [CALL, STOP]
    assert all(BODY[f.offset:f.end].decode() == f.data and f.event == EVENT for f in frames)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_any_chunking_gives_the_same_frames(size: int) -> None:
    assert frames_of(BODY, size) == frames_of(BODY)


def test_brackets_quotes_and_backslashes_inside_strings_do_not_end_an_element() -> None:
    tricky = {"text": 'a]}"\\', "more": ["[", "{", "\\\"}"]}
    body = array(tricky, {"b": 1}, indent=None)
    for size in (None, 1):
        assert [json.loads(f.data) for f in frames_of(body, size)] == [tricky, {"b": 1}]


def test_a_byte_order_mark_and_whitespace_around_the_array_are_no_content() -> None:
    body = b"\xef\xbb\xbf \r\n" + BODY + b"\r\n"
    assert [f.data for f in frames_of(body, 1)] == [f.data for f in frames_of(BODY)]


def test_an_empty_array_is_no_frame_and_no_problem() -> None:
    assert frames_of(b"[]") == frames_of(b" [ \n ] ") == []


REFUSED = {
    "ends inside an element": (BODY[:40], 1, "stream ends inside an element"),
    "never closed": (BODY[:-1], len(BODY) - 1, "before the array is closed"),
    "junk between elements": (b'[{"a":1} x {"b":2}]', 9, "expected ',' or ']'"),
    "an element that is not an object": (b"[1, 2]", 1, "expected an object or array"),
    "bytes after the closing bracket": (b'[{"a":1}]\n{"b":2}', 10, "nothing but whitespace"),
    "a trailing comma": (b'[{"a":1},]', 9, "an object or array after ','"),
    "invalid UTF-8 in an element": (b'[{"a":"\xff"}]', 7, "invalid UTF-8 in an element"),
}


@pytest.fixture(params=REFUSED.values(), ids=list(REFUSED))
def refused(request: pytest.FixtureRequest) -> tuple[bytes, int, str]:
    """A body that breaks the array, the byte where it does, what the problem says."""
    return request.param


def test_strict_mode_raises_at_the_byte_that_breaks_the_array(refused) -> None:
    body, offset, reason = refused
    with pytest.raises(CaptureError) as info:
        frames_of(body)
    assert info.value.source == "t.json" and info.value.offset == offset
    assert reason in info.value.reason


def test_lenient_mode_gives_one_problem_frame_and_keeps_the_elements_before_it(refused) -> None:
    body, offset, reason = refused
    frames = frames_of(body, 3, strict=False)
    problems = [f for f in frames if f.problem]
    assert len(problems) == 1 and problems[0].offset == offset and reason in problems[0].problem
    assert all(json.loads(f.data) is not None for f in frames if not f.problem)


def test_load_chooses_the_framing_and_reads_the_calls_as_gemini() -> None:
    df = scl.load(BODY)
    assert set(df.provider) == {"gemini"} and "error" not in set(df.kind)
    (call,) = scl.calls(df).itertuples()
    assert call.tool == "get_weather" and call.complete
    assert json.loads(call.args) == CALL["candidates"][0]["content"]["parts"][0][
        "functionCall"]["args"]


def test_an_object_per_line_is_still_ndjson() -> None:
    dec = AutoDecoder()
    dec.feed(b'{"a": 1}\n')
    assert type(dec.decoder).__name__ == "NDJSONDecoder"
    dec = AutoDecoder()
    dec.feed(b' \n[')
    assert isinstance(dec.decoder, JSONArrayDecoder)


def test_the_same_chunks_as_an_array_or_as_sse_give_the_same_calls() -> None:
    chunks = [CALL, STOP]
    as_sse = scl.calls(sse(*((None, c) for c in chunks)))
    as_array = scl.calls(array(*chunks))
    cols = ["tool", "complete", "valid_json"]
    assert as_array[cols].equals(as_sse[cols])
    assert list(map(json.loads, as_array.args)) == list(map(json.loads, as_sse.args))


@pytest.mark.captures
@pytest.mark.parametrize("path", REAL, ids=[p.name[:60] for p in REAL])
def test_every_real_array_gives_one_gemini_frame_per_element(captures, path) -> None:
    body = path.read_bytes()
    frames = list(decode_any([body], path.name))
    assert [json.loads(f.data) for f in frames] == json.loads(body)
    assert list(decode_any([body[i:i + 5] for i in range(0, len(body), 5)], path.name)) == frames
    df = scl.load(path)
    assert set(df.provider) == {"gemini"} and "error" not in set(df.kind)


@pytest.mark.captures
def test_the_real_arrays_load_the_same_with_or_without_the_fast_path(captures) -> None:
    if not REAL:
        pytest.skip("no JSON-array captures")
    caps = list(resolve(str(CAPTURES / "gemini" / "*.json")))
    fast = load_captures(caps, strict=False)
    slow = load_captures(list(resolve(str(CAPTURES / "gemini" / "*.json"))), strict=False,
                         bulk=False)
    assert fast.equals(slow)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(BODY)), st.sampled_from(
    [b"", b"[", b"]", b"{", b"}", b",", b'"', b"\\", b" ", b"\xff", b"\xc3", b"x"])),
    max_size=4), st.sampled_from([1, 2, 5]))
def test_a_damaged_array_frames_the_same_in_any_chunking_and_strict_stops_at_its_problem(
    edits: list[tuple[int, bytes]], size: int
) -> None:
    body = bytearray(BODY)
    for at, byte in edits:
        body[at:at + 1] = byte
    body = bytes(body)
    lenient = frames_of(body, strict=False)
    assert frames_of(body, size, strict=False) == lenient
    problems = [f for f in lenient if f.problem]
    if problems:  # strict stops at the first problem lenient mode reports, at its byte
        with pytest.raises(CaptureError) as info:
            frames_of(body, size)
        assert info.value.offset == problems[0].offset
    else:
        assert frames_of(body, size) == lenient
