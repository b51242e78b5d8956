"""AWS event-stream framing, one rule per test, then the real Bedrock captures."""

from __future__ import annotations

import itertools
import json
import struct
import uuid
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import CaptureError, frames
from streamcalls_lab.framing import AutoDecoder, decode_any
from streamcalls_lab.framing.eventstream import (
    MAX_HEADERS,
    MAX_PAYLOAD,
    EventStreamDecoder,
    parse_headers,
)
from streamcalls_lab.framing.sse import SSEDecoder

from ..support.eventstream_turns import (
    REAL,
    decode,
    each_real,
    event,
    exception,
    frame,
    header,
    real,
    string,
)


def problem(body: bytes) -> str:
    """The reason of the only problem frame lenient decoding gives."""
    [reason] = [f.problem for f in decode(body, strict=False) if f.problem is not None]
    return reason


GOOD = event("messageStop", '{"stopReason":"end_turn"}')


# -- messages ------------------------------------------------------------------------------


def test_an_event_message_is_a_frame_named_by_its_event_type() -> None:
    [f] = decode(event("messageStart", '{"role":"assistant"}'))
    assert (f.event, f.data, f.problem) == ("messageStart", '{"role":"assistant"}', None)


def test_a_frame_spans_its_message_bytes() -> None:
    first = event("messageStart")
    got = decode(first + GOOD)
    assert [(f.offset, f.end) for f in got] == [(0, len(first)), (len(first), len(first + GOOD))]


def test_an_exception_is_a_frame_named_by_its_exception_type() -> None:
    [f] = decode(exception("throttlingException", "slow down"))
    assert (f.event, json.loads(f.data), f.problem) == (
        "throttlingException", {"message": "slow down"}, None)


def test_a_message_without_a_message_type_is_an_event() -> None:
    [f] = decode(frame(string(":event-type", "metadata"), b"{}"))
    assert (f.event, f.problem) == ("metadata", None)


def test_an_empty_payload_is_empty_data() -> None:
    [f] = decode(event("ping", b""))
    assert f.data == ""


def test_a_frame_carries_the_time_of_the_read_that_completed_it() -> None:
    body = event("a") + event("b")
    dec = EventStreamDecoder()
    got = dec.feed(body[:5], 0.0) + dec.feed(body[5:-1], 0.5) + dec.feed(body[-1:], 0.9)
    assert [f.t for f in got] == [0.5, 0.9]


def test_a_frame_comes_out_of_the_read_that_completes_it() -> None:
    dec = EventStreamDecoder()
    assert dec.feed(GOOD[:-1]) == []
    assert [f.event for f in dec.feed(GOOD[-1:])] == ["messageStop"]


# -- header value types --------------------------------------------------------------------

HEADER_VALUES = {  # type name: (type code, the value as encoded, the value as read)
    "bool true": (0, b"", True),
    "bool false": (1, b"", False),
    "byte": (2, b"\xff", -1),
    "short": (3, struct.pack(">h", -300), -300),
    "int": (4, struct.pack(">i", 70000), 70000),
    "long": (5, struct.pack(">q", -(2**40)), -(2**40)),
    "bytes": (6, b"\x00\x03\x00\xff\x01", b"\x00\xff\x01"),
    "string": (7, b"\x00\x05caf\xc3\xa9", "caf\u00e9"),
    "timestamp": (8, struct.pack(">q", 1_700_000_000_000), 1_700_000_000_000),
    "uuid": (9, bytes(range(16)), uuid.UUID(bytes=bytes(range(16)))),
}


@pytest.mark.parametrize("kind", HEADER_VALUES)
def test_each_header_type_is_read(kind: str) -> None:
    code, raw, value = HEADER_VALUES[kind]
    got = parse_headers(header("h", code, raw))["h"]
    assert (type(got), got) == (type(value), value)


def test_headers_of_every_type_around_the_event_type_leave_the_frame_intact() -> None:
    extra = b"".join(header(name, code, raw) for name, (code, raw, _) in HEADER_VALUES.items())
    [f] = decode(event("metadata", "{}", extra=extra))
    assert (f.event, f.problem) == ("metadata", None)


# -- problems: each in strict mode (raised, with an offset) and lenient mode (a frame) --------


def test_a_bad_prelude_crc_is_raised_at_the_message() -> None:
    bad = frame(b"", b"{}", prelude_crc=0)
    with pytest.raises(CaptureError, match="prelude CRC mismatch") as e:
        decode(GOOD + bad)
    assert e.value.offset == len(GOOD)


def test_a_bad_prelude_crc_stops_decoding_and_says_so() -> None:
    got = decode(GOOD + frame(b"", b"{}", prelude_crc=0) + GOOD, strict=False)
    assert [f.event for f in got] == ["messageStop", ""]
    assert "decoding stops here" in got[1].problem and got[1].offset == len(GOOD)


def test_nothing_after_a_stop_is_reported_again() -> None:
    dec = EventStreamDecoder(strict=False)
    got = dec.feed(frame(b"", b"{}", prelude_crc=0)) + dec.feed(GOOD[:20]) + dec.close()
    assert len(got) == 1


def test_a_bad_message_crc_is_raised_at_the_message() -> None:
    with pytest.raises(CaptureError, match="message CRC mismatch") as e:
        decode(GOOD + event("x")[:-4] + b"\0\0\0\0")
    assert e.value.offset == len(GOOD)


def test_a_bad_message_crc_skips_that_message_and_goes_on() -> None:
    bad = event("x")[:-4] + b"\0\0\0\0"
    got = decode(bad + GOOD, strict=False)
    assert [(f.offset, f.event, f.problem is None) for f in got] == [
        (0, "", False), (len(bad), "messageStop", True)]
    assert "skipped" in got[0].problem


def test_lengths_that_do_not_add_up_are_a_problem() -> None:
    body = frame(string("a", "b"), b"", total=15)  # smaller than prelude + headers + CRC
    assert "lengths do not add up" in problem(body)


def test_headers_longer_than_the_maximum_are_a_problem() -> None:
    prelude = struct.pack(">II", MAX_HEADERS + 17, MAX_HEADERS + 1)
    body = prelude + struct.pack(">I", zlib.crc32(prelude))
    assert f"exceeds the {MAX_HEADERS}-byte maximum" in problem(body)


def test_a_payload_longer_than_the_maximum_is_a_problem_without_waiting_for_it() -> None:
    prelude = struct.pack(">II", MAX_PAYLOAD + 17, 0)
    dec = EventStreamDecoder()
    with pytest.raises(CaptureError, match="payload length"):
        dec.feed(prelude + struct.pack(">I", zlib.crc32(prelude)))


def test_a_truncated_final_message_is_a_problem_at_its_start() -> None:
    with pytest.raises(CaptureError, match="stream ends inside a message") as e:
        decode(GOOD + GOOD[:-3])
    assert e.value.offset == len(GOOD)


def test_a_truncation_inside_the_prelude_is_a_problem() -> None:
    assert "fewer than the 12 of a prelude" in problem(GOOD + GOOD[:5])


def test_a_truncated_message_gives_its_good_frames_first_in_lenient_mode() -> None:
    got = decode(GOOD + GOOD[:-3], strict=False)
    assert [(f.event, f.offset, f.end) for f in got] == [
        ("messageStop", 0, len(GOOD)), ("", len(GOOD), 2 * len(GOOD) - 3)]


def test_an_unknown_header_type_is_raised_at_the_type_byte() -> None:
    bad = header("x", 10, b"")
    with pytest.raises(CaptureError, match="unknown header value type 10") as e:
        decode(event("e", extra=bad))
    heads = len(event("e")) - 16 - 2  # the headers before it: the message less prelude, CRC, {}
    assert e.value.offset == 12 + heads + len(bad) - 1


def test_an_unknown_header_type_skips_only_its_message() -> None:
    got = decode(event("e", extra=header("x", 10)) + GOOD, strict=False)
    assert [f.event for f in got] == ["", "messageStop"]
    assert "decoding goes on" in got[0].problem


def test_a_header_running_past_the_headers_section_is_a_problem() -> None:
    assert "runs past the end of the headers" in problem(frame(header("h", 4, b"\0\0"), b"{}"))


def test_a_duplicate_header_is_a_problem() -> None:
    assert "duplicate header ':event-type'" in problem(event("e", extra=string(":event-type", "f")))


def test_a_header_name_that_is_not_utf8_is_a_problem() -> None:
    raw = bytes([2]) + b"\xffa" + bytes([0])
    assert "invalid UTF-8 in header name (byte 0xff" in problem(event("e", extra=raw))


def test_a_string_header_that_is_not_utf8_is_a_problem() -> None:
    body = event("e", extra=string("h", b"\xc3("))
    assert "invalid UTF-8 in header 'h' (byte 0xc3" in problem(body)


def test_a_payload_that_is_not_utf8_is_raised_at_the_byte() -> None:
    body = event("e", b'{"a":"\xff"}')
    with pytest.raises(CaptureError, match="invalid UTF-8 in payload") as e:
        decode(body)
    assert e.value.offset == len(body) - 4 - 3


def test_a_payload_that_is_not_utf8_is_kept_with_a_problem_in_lenient_mode() -> None:
    [f] = decode(event("e", b'"\xff"'), strict=False)
    assert (f.event, f.data) == ("e", '"\ufffd"')
    assert "byte 0xff" in f.problem


def test_an_event_without_an_event_type_is_a_problem() -> None:
    assert "without a string :event-type" in problem(frame(string(":message-type", "event"), b""))


def test_an_event_type_that_is_not_a_string_is_a_problem() -> None:
    body = frame(header(":event-type", 4, b"\0\0\0\1"), b"{}")
    assert "without a string :event-type" in problem(body)


def test_an_error_message_is_a_problem_naming_code_and_message() -> None:
    heads = (string(":message-type", "error") + string(":error-code", "InternalFailure")
             + string(":error-message", "boom"))
    assert problem(frame(heads, b"")).startswith("AWS error message: InternalFailure: boom")


def test_an_unknown_message_type_is_a_problem() -> None:
    assert "unknown :message-type 'gossip'" in problem(frame(string(":message-type", "gossip"),
                                                             b""))


# -- the same frames for any chunking -------------------------------------------------------

SYNTHETIC = (event("messageStart", '{"role":"assistant"}') + exception("validationException", "x")
             + event("e", b'"\xff"') + event("x")[:-4] + b"\0\0\0\0" + GOOD)


def chunked(body: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *sorted({c for c in cuts if c <= len(body)}), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


def lenient(chunks: list[bytes]) -> list:
    dec = EventStreamDecoder(strict=False)
    return [f for c in chunks for f in dec.feed(c)] + dec.close()


@given(cuts=st.lists(st.integers(0, len(SYNTHETIC)), max_size=30),
       tail=st.integers(0, len(GOOD)))
def test_any_chunking_gives_the_same_frames_and_problems(cuts: list[int], tail: int) -> None:
    body = SYNTHETIC + GOOD[:tail]  # and a truncated last message, some of the time
    assert lenient(chunked(body, cuts)) == lenient([body])


def test_byte_by_byte_equals_whole() -> None:
    assert lenient([SYNTHETIC[i : i + 1] for i in range(len(SYNTHETIC))]) == lenient([SYNTHETIC])


# -- choosing the framing -------------------------------------------------------------------


def test_auto_reads_binary_as_event_stream() -> None:
    dec = AutoDecoder()
    [f] = dec.feed(GOOD) + dec.close()
    assert isinstance(dec.decoder, EventStreamDecoder) and f.event == "messageStop"


def test_auto_reads_text_as_sse() -> None:
    dec = AutoDecoder()
    [f] = dec.feed(b"data: x\n\n") + dec.close()
    assert isinstance(dec.decoder, SSEDecoder) and f.data == "x"


def test_auto_holds_no_sse_frame_back() -> None:
    dec = AutoDecoder()
    assert [f.data for f in dec.feed(b"data: a\n\n")] == ["a"]  # 9 bytes: out at once


def test_auto_reports_an_empty_capture() -> None:
    with pytest.raises(CaptureError, match="empty capture"):
        AutoDecoder().close()


def test_a_corrupt_first_prelude_is_reported_as_event_stream() -> None:
    with pytest.raises(CaptureError, match="prelude CRC mismatch"):
        list(decode_any([frame(b"", b"{}", prelude_crc=1)]))


def test_frames_reads_an_eventstream_file(tmp_path: Path) -> None:
    path = tmp_path / "turn.eventstream"
    path.write_bytes(event("messageStart") + GOOD)
    assert [f.event for f in frames(path)] == ["messageStart", "messageStop"]


# -- the real Bedrock captures --------------------------------------------------------------

def _decoded(path: Path) -> list[dict]:
    lines = path.with_name(path.name.removesuffix(".eventstream") + ".decoded.jsonl")
    return [json.loads(line) for line in lines.read_text().splitlines()]


@each_real
def test_real_capture_frames_equal_the_decoded_jsonl_beside_it(path: Path) -> None:
    got = list(frames(path))
    assert [f.problem for f in got] == [None] * len(got)
    assert [{f.event: json.loads(f.data)} for f in got] == _decoded(path)


@each_real
def test_real_capture_frames_equal_botocores(path: Path) -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    body = path.read_bytes()
    buf = eventstream.EventStreamBuffer()
    buf.add_data(body)
    theirs = [(m.headers[":event-type"], m.payload) for m in buf]
    assert [(f.event, f.data.encode()) for f in decode(body)] == theirs


@real
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_of_a_real_capture_gives_the_same_frames(data: st.DataObject) -> None:
    body = data.draw(st.sampled_from(REAL), label="capture").read_bytes()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=40), label="cuts")
    assert lenient(chunked(body, cuts)) == lenient([body])


# -- describe: a message as the stepper's raw-frame panel shows it ---------------------------
def test_describe_names_each_header_with_its_type_and_shows_the_payload() -> None:
    from streamcalls_lab.framing.eventstream import describe

    text = describe(event("contentBlockDelta", '{"delta": {"text": "é"}}',
                          extra=header("n", 4, struct.pack(">i", 7))))
    assert "both CRCs hold" in text.splitlines()[0]
    assert ":event-type (string) = contentBlockDelta" in text
    assert "n (int) = 7" in text
    assert text.endswith('payload:\n{"delta": {"text": "é"}}')


def test_describe_says_a_message_crc_fails() -> None:
    from streamcalls_lab.framing.eventstream import describe

    msg = bytearray(event("x", "{}"))
    msg[-1] ^= 1
    assert "message CRC mismatch" in describe(bytes(msg)).splitlines()[0]


@pytest.mark.parametrize("cut", [5, 20])
def test_describe_shows_bytes_that_are_no_whole_message_in_hex(cut: int) -> None:
    from streamcalls_lab.framing.eventstream import describe

    msg = event("x", '{"a": 1}')
    text = describe(msg[:cut])
    assert "hex" in text and msg[:4].hex(" ") in text and "\x00" not in text


def test_describe_shows_a_bytes_header_in_hex_not_as_text() -> None:
    from streamcalls_lab.framing.eventstream import describe

    blob = header("blob", 6, struct.pack(">H", 4) + b"\x00\x02\xff\xfe")
    text = describe(event("x", "{}", extra=blob))
    assert "blob (bytes) = 0x0002fffe (4 bytes)" in text and "\x00" not in text


def test_describe_marks_a_payload_that_is_not_utf8() -> None:
    from streamcalls_lab.framing.eventstream import describe

    assert "not UTF-8 from its byte 1" in describe(event("x", b"{\xff}"))


@each_real
def test_describe_reads_every_message_of_the_real_captures(path: Path) -> None:
    from streamcalls_lab.framing.eventstream import describe

    body = path.read_bytes()
    for fr in decode(body, strict=False):
        if fr.problem is None:
            text = describe(body[fr.offset:fr.end])
            assert "both CRCs hold" in text and f"= {fr.event}" in text
            assert text.endswith(fr.data)
