"""The writers: SSE frames and event-stream messages read back by the decoders (and botocore)."""

from __future__ import annotations

import struct
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcalls_lab.framing.eventstream import (
    HEADER_TYPES,
    MAX_PAYLOAD,
    PRELUDE,
    EventStreamDecoder,
    Typed,
    encode_header,
    encode_headers,
    encode_message,
    event_message,
    exception_message,
    parse_headers,
)
from streamcalls_lab.framing.sse import SSEDecoder, sse_body, sse_frame

from ..support.eventstream_turns import each_real


def sse_decode(body: bytes) -> list:
    dec = SSEDecoder()
    return dec.feed(body) + dec.close()


def es_decode(body: bytes) -> list:
    dec = EventStreamDecoder()
    return dec.feed(body) + dec.close()


# -- SSE -----------------------------------------------------------------------------------

def test_a_frame_is_an_event_line_a_data_line_and_a_blank_line() -> None:
    assert sse_frame('{"a":1}', "ping") == 'event: ping\ndata: {"a":1}\n\n'


def test_a_frame_without_an_event_has_only_its_data_line() -> None:
    assert sse_frame("[DONE]") == "data: [DONE]\n\n"


def test_multi_line_data_is_one_data_line_per_line() -> None:
    assert sse_frame("a\n\nb") == "data: a\ndata:\ndata: b\n\n"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ends_with_the_chosen_line_end(newline: str) -> None:
    text = sse_frame("x\ny", "e", id="7", retry=10, comment="c", newline=newline)  # type: ignore[arg-type]
    assert text.split(newline) == [": c", "event: e", "id: 7", "retry: 10", "data: x",
                                   "data: y", "", ""]


@pytest.mark.parametrize("brk", ["\r\n", "\r", "\n"])
def test_any_line_break_inside_data_comes_back_as_lf(brk: str) -> None:
    [f] = sse_decode(sse_body([sse_frame(f"a{brk}b")]))
    assert f.data == "a\nb"


@pytest.mark.parametrize("field", ["event", "id"])
@pytest.mark.parametrize("brk", ["\n", "\r"])
def test_a_line_break_in_a_one_line_field_is_refused(field: str, brk: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        sse_frame("x", **{field: f"a{brk}b"})


def test_an_id_holding_nul_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        sse_frame("x", id="a\0b")


def test_a_negative_retry_is_refused() -> None:
    with pytest.raises(ValueError, match="milliseconds"):
        sse_frame(None, retry=-1)


def test_an_empty_frame_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one field"):
        sse_frame(None)


def test_a_comment_only_frame_dispatches_nothing() -> None:
    assert sse_decode(sse_body([sse_frame(None, comment="keep-alive\nstill here")])) == []


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
_ONE_LINE = _TEXT.filter(lambda s: not any(c in s for c in "\r\n\0"))


@settings(max_examples=150, deadline=None)
@given(data=_TEXT, event=st.none() | _ONE_LINE, id=st.none() | _ONE_LINE,
       retry=st.none() | st.integers(0, 10**6), comment=st.none() | _TEXT,
       newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_frame_decodes_to_what_was_written(data: str, event: str | None, id: str | None,
                                               retry: int | None, comment: str | None,
                                               newline: str) -> None:
    body = sse_body([sse_frame(data, event, id=id, retry=retry, comment=comment,
                               newline=newline)])  # type: ignore[arg-type]
    [f] = sse_decode(body)
    want = data.replace("\r\n", "\n").replace("\r", "\n")
    assert (f.event, f.data, f.id, f.retry, f.end) == (
        event or "message", want, id or "", retry, len(body))


# -- event-stream --------------------------------------------------------------------------

VALUES = {  # a value of each wire type, forced where the default would pick another
    "bool true": True,
    "bool false": False,
    "byte": Typed(2, -1),
    "short": Typed(3, -300),
    "int": 70000,
    "long": -(2**40),
    "bytes": b"\x00\xff\x01",
    "string": "caf\u00e9",
    "timestamp": Typed(8, 1_700_000_000_000),
    "uuid": uuid.UUID(bytes=bytes(range(16))),
}


@pytest.mark.parametrize("kind", VALUES)
def test_each_header_type_is_written_as_its_code_and_read_back(kind: str) -> None:
    value = VALUES[kind]
    raw = encode_header("h", value)
    want = value.value if isinstance(value, Typed) else value
    assert (HEADER_TYPES[raw[2]], parse_headers(raw)) == (kind, {"h": want})


def test_a_datetime_header_is_a_timestamp_in_milliseconds() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_headers(encode_header("t", when)) == {"t": 1_767_225_600_000}


@pytest.mark.parametrize(("value", "reason"), [
    (Typed(2, 200), "does not fit"),
    (Typed(0, False), "type 0 is the value True"),
    (Typed(7, b"x"), "type 7"),
    ("x" * 65536, "65535"),
    (Typed(9, "not a uuid"), "cannot be written as type 9"),
])
def test_a_value_its_type_cannot_hold_is_refused(value: object, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        encode_header("h", value)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "n" * 256])
def test_a_header_name_outside_1_to_255_bytes_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="1-255"):
        encode_header(name, "x")


def test_a_value_of_no_header_type_is_refused() -> None:
    with pytest.raises(TypeError, match="float"):
        encode_header("h", 1.5)  # type: ignore[arg-type]


def test_a_payload_past_the_decoders_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="limits"):
        encode_message({}, b"x" * (MAX_PAYLOAD + 1))


def test_a_message_decodes_to_its_event_type_and_payload() -> None:
    body = event_message("messageStop", '{"stopReason":"end_turn"}')
    [f] = es_decode(body)
    assert (f.event, f.data, f.offset, f.end) == ("messageStop", '{"stopReason":"end_turn"}',
                                                  0, len(body))


def test_an_exception_message_decodes_to_its_exception_type() -> None:
    [f] = es_decode(exception_message("throttlingException", '{"message":"slow"}'))
    assert (f.event, f.data) == ("throttlingException", '{"message":"slow"}')


def test_encoded_headers_are_kept_byte_for_byte() -> None:
    raw = encode_headers({":event-type": "x", "n": Typed(3, 5)})
    assert encode_message(raw, b"p") == encode_message({":event-type": "x", "n": Typed(3, 5)},
                                                       b"p")


def _botocore(body: bytes) -> list[tuple[dict, bytes]]:
    eventstream = pytest.importorskip("botocore.eventstream")
    buf = eventstream.EventStreamBuffer()
    buf.add_data(body)
    return [(m.headers, m.payload) for m in buf]


_HEADER_VALUE = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.binary(max_size=40),
    st.text(max_size=40), st.uuids(),
    st.builds(Typed, st.sampled_from([2]), st.integers(-128, 127)),
    st.builds(Typed, st.sampled_from([3]), st.integers(-(2**15), 2**15 - 1)),
)


@settings(max_examples=100, deadline=None)
@given(headers=st.dictionaries(st.text(min_size=1, max_size=20).filter(
    lambda s: len(s.encode()) < 256), _HEADER_VALUE, max_size=6),
       payload=st.binary(max_size=200))
def test_botocore_reads_any_message_as_written(headers: dict, payload: bytes) -> None:
    [(theirs, body)] = _botocore(encode_message(headers, payload))
    want = {k: v.value if isinstance(v, Typed) else v for k, v in headers.items()}
    # botocore reads a uuid as its 16 bytes; every other value as the decoder here does.
    assert (theirs, body) == ({k: v.bytes if isinstance(v, uuid.UUID) else v
                               for k, v in want.items()}, payload)


@settings(max_examples=100, deadline=None)
@given(headers=st.dictionaries(st.text(min_size=1, max_size=20).filter(
    lambda s: len(s.encode()) < 256), _HEADER_VALUE, max_size=6))
def test_the_decoder_reads_any_headers_as_written(headers: dict) -> None:
    want = {k: v.value if isinstance(v, Typed) else v for k, v in headers.items()}
    assert parse_headers(encode_headers(headers)) == want


def _messages(body: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """Each message of a capture as (its bytes, its headers section, its payload)."""
    out, at = [], 0
    while at < len(body):
        total, hlen = struct.unpack_from(">II", body, at)
        msg = body[at:at + total]
        out.append((msg, msg[PRELUDE:PRELUDE + hlen], msg[PRELUDE + hlen:-4]))
        at += total
    return out


@each_real
def test_real_messages_re_encode_byte_for_byte_from_their_decoded_headers(path: Path) -> None:
    for msg, raw, payload in _messages(path.read_bytes()):
        assert encode_message(parse_headers(raw), payload) == msg
