"""The SSE decoder, one WHATWG rule per test, then chunk invariance on real captures."""

from __future__ import annotations

import io
import itertools
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import CaptureError, frames
from streamcalls_lab.framing.sse import SSEDecoder, decode_frames

from ..conftest import capture_files


def decode(body: bytes, *, strict: bool = True) -> list:
    return list(decode_frames([body], strict=strict))


ONE_FRAME = {  # WHATWG rule: (a body of one event, the fields of its frame)
    "a data line dispatches on a blank line": (b"data: hello\n\n",
                                               {"event": "message", "data": "hello"}),
    "the event field names the event": (b"event: ping\ndata: {}\n\n", {"event": "ping"}),
    "multiline data is joined with LF": (b"data: a\ndata: b\n\n", {"data": "a\nb"}),
    "CRLF line ends": (b"event: x\r\ndata: y\r\n\r\n", {"event": "x", "data": "y"}),
    "CR line ends": (b"event: x\rdata: y\r\r", {"event": "x", "data": "y"}),
    "comment lines are ignored": (b": keep-alive\ndata: x\n\n", {"data": "x"}),
    "only one leading space is stripped": (b"data:  two spaces\n\n", {"data": " two spaces"}),
    "no space after the colon": (b"data:x\n\n", {"data": "x"}),
    # "data" alone means a data field with an empty value.
    "a field without a colon is its whole name": (b"data\ndata: x\n\n", {"data": "\nx"}),
    "a leading BOM is ignored": (b"\xef\xbb\xbfdata: x\n\n", {"data": "x", "offset": 3}),
    "an id with NUL is ignored": (b"id: a\0b\ndata: x\n\n", {"id": ""}),
    "retry digits are read": (b"retry: 3000\ndata: x\n\n", {"retry": 3000}),
    "retry non-digits are ignored": (b"retry: soon\ndata: x\n\n", {"retry": None}),
    "a retry with thousands of leading zeros is its value": (
        b"retry: " + b"0" * 5000 + b"25\ndata: x\n\n", {"retry": 25}),
}


@pytest.mark.parametrize(("body", "fields"), ONE_FRAME.values(), ids=ONE_FRAME)
def test_one_event_gives_one_frame_with_these_fields(body: bytes, fields: dict) -> None:
    [f] = decode(body)
    assert {name: getattr(f, name) for name in fields} == fields


def test_mixed_line_ends() -> None:
    got = decode(b"data: a\r\n\ndata: b\r\rdata: c\n\r\n")
    assert [f.data for f in got] == ["a", "b", "c"]


def test_block_without_data_dispatches_nothing() -> None:
    assert decode(b"event: ping\n\ndata: x\n\n")[0].data == "x"
    assert len(decode(b"event: ping\n\n")) == 0


def test_id_is_kept_and_carried_forward() -> None:
    a, b = decode(b"id: 7\ndata: a\n\ndata: b\n\n")
    assert (a.id, b.id) == ("7", "7")


def test_offsets_point_at_each_frame() -> None:
    body = b"data: a\n\n: c\nevent: e\ndata: b\n\n"
    a, b = decode(body)
    assert (a.offset, b.offset) == (0, body.index(b"event"))
    assert (a.end, b.end) == (9, len(body))


def test_unterminated_final_block_is_not_an_event() -> None:
    got = decode(b"data: a\n\ndata: b\n", strict=False)
    assert [f.data for f in got if f.problem is None] == ["a"]


def test_unterminated_final_block_is_reported_in_lenient_mode() -> None:
    [_, problem] = decode(b"data: a\n\ndata: b", strict=False)
    assert problem.offset == 9 and "ends inside a frame" in problem.problem


def test_run_of_non_sse_lines_is_one_problem() -> None:
    got = decode(b"<html>\n<body>\n</html>\n\ndata: a\n\n", strict=False)
    assert [bool(f.problem) for f in got] == [True, False]


def test_invalid_utf8_kept_as_flagged_frame_in_lenient_mode() -> None:
    [f] = decode(b"data: a\xff\n\n", strict=False)
    assert f.data == "a\ufffd" and "invalid UTF-8" in f.problem


def test_split_multibyte_character_is_harmless() -> None:
    body = "data: caf\u00e9 \U0001f600\n\n".encode()
    cut = body.index(b"\xc3") + 1
    dec = SSEDecoder()
    got = dec.feed(body[:cut]) + dec.feed(body[cut:]) + dec.close()
    assert got[0].data == "caf\u00e9 \U0001f600"


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    dec = SSEDecoder()
    got = dec.feed(b"data: a\r") + dec.feed(b"\n\r") + dec.feed(b"\n") + dec.close()
    assert [f.data for f in got] == ["a"]


def test_bom_split_across_chunks_is_ignored() -> None:
    dec = SSEDecoder()
    got = dec.feed(b"\xef") + dec.feed(b"\xbb") + dec.feed(b"\xbfdata: x\n\n") + dec.close()
    assert [(f.data, f.offset) for f in got] == [("x", 3)]


def test_chunk_times_stamp_the_frames_they_complete() -> None:
    got = list(decode_frames([(0.0, b"data: a\n\ndata: "), (0.5, b"b\n\n")]))
    assert [f.t for f in got] == [0.0, 0.5]


def test_frames_accepts_a_path(tmp_path) -> None:
    p = tmp_path / "x.sse"
    p.write_bytes(b"data: a\n\n")
    assert [f.data for f in frames(p)] == ["a"]


# -- the same frames for any chunking -------------------------------------------

CAPTURES = capture_files()


def _all_frames(chunks: list[bytes]) -> list:
    return list(decode_frames(chunks, strict=False))


def _chunked(body: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


@pytest.mark.captures
@pytest.mark.skipif(not CAPTURES, reason="real captures not available")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_of_a_real_capture_gives_the_same_frames(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(CAPTURES), label="capture")
    body = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=40), label="cuts")
    assert _all_frames(_chunked(body, cuts)) == _all_frames([body])


@pytest.mark.captures
@pytest.mark.skipif(not CAPTURES, reason="real captures not available")
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name[:80])
def test_byte_by_byte_equals_whole_for_every_capture(path) -> None:
    body = path.read_bytes()
    assert _all_frames([body[i : i + 1] for i in range(len(body))]) == _all_frames([body])


@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["data", "event", "id", "retry", ""]),
            st.text(
                alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]),
                max_size=8,
            ),
            st.sampled_from(["\n", "\r\n", "\r"]),
        ),
        max_size=20,
    ),
    cuts=st.lists(st.integers(0, 400), max_size=10),
)
def test_any_chunking_of_generated_streams_gives_the_same_frames(lines, cuts) -> None:
    body = "".join(f"{name}: {value}{eol}" if name else eol for name, value, eol in lines)
    raw = body.encode()
    assert _all_frames(_chunked(raw, [c for c in cuts if c <= len(raw)])) == _all_frames([raw])


# -- absurd bytes: never a crash, never quadratic ----------------------------------------------
def test_retry_of_thousands_of_digits_is_a_problem_row_in_lenient_mode() -> None:
    problem, frame = decode(b"retry: " + b"9" * 5000 + b"\ndata: x\n\n", strict=False)
    assert "too large" in problem.problem
    assert (frame.data, frame.retry, frame.problem) == ("x", None, None)


def test_retry_of_18_digits_is_read_and_19_is_a_problem() -> None:
    [f] = decode(b"retry: " + b"9" * 18 + b"\ndata: x\n\n")
    assert f.retry == 10**18 - 1
    with pytest.raises(CaptureError, match="19 digits"):
        decode(b"retry: " + b"9" * 19 + b"\ndata: x\n\n")


LONG_LINES = {  # one long line that never ends, cut into many small reads
    "data": b"data: " + b"x" * (8 << 20),
    "not a field": b"x" * (8 << 20),
    "a field after a CR": b"data: a\r" + b"x" * (8 << 20),
}
_READ = 1 << 16


@pytest.mark.parametrize("how", ["chunks", "file object"])
@pytest.mark.parametrize("shape", LONG_LINES)
def test_a_long_line_in_many_reads_is_held_not_copied_again_at_each_read(shape, how) -> None:
    """Each read used to re-copy and re-scan every byte held so far: quadratic time, and a
    peak of twice the line. Now the reads are held as they came; at most their own bytes."""
    body = LONG_LINES[shape]
    pieces = [body[i:i + _READ] for i in range(0, len(body), _READ)]
    source = pieces if how == "chunks" else _SmallReads(body)
    tracemalloc.start()
    try:
        got = list(frames(source, strict=False))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "stream ends inside a frame" in got[-1].problem or "not an SSE" in got[-1].problem
    assert peak < 1.25 * len(body), f"peak {peak / len(body):.2f}x the line"


class _SmallReads(io.RawIOBase):
    """A binary file object that hands back at most 64 KiB a read (a pipe, a socket)."""

    def __init__(self, body: bytes) -> None:
        self._body, self._at = body, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        piece = self._body[self._at:self._at + min(len(buf), _READ)]
        buf[:len(piece)] = piece
        self._at += len(piece)
        return len(piece)
