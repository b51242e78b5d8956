"""decode.EventDecoder: bytes in any chunking to normalised events, one behaviour per test."""

from __future__ import annotations

import pytest

from streamcalls_lab import loader
from streamcalls_lab.decode import UNKNOWN, EventDecoder
from streamcalls_lab.errors import CaptureError
from streamcalls_lab.providers import FORMATS

from .support.sse_turns import START, TOOL, anthropic, args_delta, sse

STOP = {"type": "content_block_stop", "index": 1}
BODY = anthropic(START, TOOL, args_delta('{"city": '), args_delta('"K\u00f8benhavn"}'), STOP,
                 {"type": "message_stop"})


def _rows(dec: EventDecoder, chunks: list[bytes]) -> list[tuple]:
    out = []
    for chunk in chunks:
        out += dec.feed(chunk)
    out += dec.close()
    return [(d.frame.offset, d.n, d.provider, d.ev) for d in out]


def test_every_chunking_gives_the_same_events() -> None:
    whole = _rows(EventDecoder(), [BODY])
    for size in (1, 2, 3, 7, 64):
        pieces = [BODY[i:i + size] for i in range(0, len(BODY), size)]
        assert _rows(EventDecoder(), pieces) == whole, size


def test_the_events_match_load_row_for_row() -> None:
    df = loader.load(BODY)
    evs = [d.ev for d in EventDecoder().feed(BODY)]
    assert [ev.kind for ev in evs] == list(df.kind.astype(str))
    frags = [ev.fragment for ev in evs if ev.kind == "args_delta"]
    assert frags == ['{"city": ', '"K\u00f8benhavn"}']


def test_a_frame_before_the_format_shows_is_held_then_named() -> None:
    ping = sse(("ping", {"type": "ping"}))
    dec = EventDecoder()
    assert dec.feed(ping) == []  # a ping alone says nothing of the format
    assert dec.provider == UNKNOWN
    out = dec.feed(BODY)
    assert out[0].frame.event == "ping" and out[0].provider == "anthropic-messages"


def test_frames_of_a_format_never_shown_come_out_on_close_as_unknown() -> None:
    dec = EventDecoder()
    dec.feed(sse(("ping", {"type": "ping"})))
    (row,) = dec.close()
    assert row.provider == UNKNOWN and row.ev.kind == "other" and row.ev.problem


def test_invalid_json_is_an_error_naming_source_and_offset() -> None:
    body = BODY + b"data: {oops\n\n"
    with pytest.raises(CaptureError) as info:
        EventDecoder("turn.sse").feed(body)
    assert info.value.source == "turn.sse" and info.value.offset == len(BODY)
    assert "invalid JSON" in info.value.reason


def test_lenient_decoding_turns_the_bad_frame_into_an_error_row() -> None:
    rows = EventDecoder(strict=False).feed(BODY + b"data: {oops\n\n")
    assert rows[-1].ev.kind == "error" and rows[-1].frame.offset == len(BODY)


def test_folding_counts_a_run_of_like_problems_in_one_row() -> None:
    bad = b"".join(b"data: {%d\n\n" % i for i in range(5))
    dec = EventDecoder(strict=False, fold=True)
    rows = dec.feed(BODY + bad) + dec.close()
    errors = [d for d in rows if d.ev.kind == "error"]
    assert len(errors) == 1 and dec.runs == {errors[0].n: 5}


def test_an_unknown_provider_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        EventDecoder(provider="nope")


@pytest.mark.parametrize("fmt", ["gemini", "ollama", "openai-chat", "anthropic-messages"])
def test_an_integer_wider_than_a_double_is_read_exactly_and_a_float_as_wide_is_a_problem(
        fmt: str) -> None:
    """orjson refuses an integer literal of 309 digits or more (``number is infinity``), which
    is JSON and which msgspec (the fast path) reads: the decoder reads it too, a call's
    arguments byte for byte; a float past a double's range is no number anyone reads."""
    import streamcalls_lab as scl
    from streamcalls_lab.generate import ToolCall, generate

    wide = '{"n": ' + "9" * 400 + ', "m": -' + "1" * 4300 + "}"
    calls = scl.calls(scl.load(generate([ToolCall("t", wide)], provider=fmt).body))
    assert calls["args"].tolist() == [wide] and calls["valid_json"].all()
    body = generate([ToolCall("t", '{"n": ' + "9" * 400 + '.5}')], provider=fmt).body
    problems = scl.load(body, strict=False)["problem"].dropna()
    if FORMATS[fmt].calls_whole:  # the value is in the frame's payload, not a string in it
        assert problems.str.contains("number is infinity").any()
        with pytest.raises(CaptureError, match="number is infinity"):
            scl.load(body)
    else:
        assert problems.empty
