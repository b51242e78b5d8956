"""Strict mode names the first problem, in any chunking: with several problems of different
kinds in one capture, in every framing, strict raises exactly where lenient's first problem
row is (offset and reason), whether the bytes come whole (the fast path, then the decoder on
64 KB pieces), through the decoder alone, or cut at random points."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import CaptureError, load
from streamcalls_lab.decode import EventDecoder
from streamcalls_lab.framing import decode_any
from streamcalls_lab.loader import load_captures
from streamcalls_lab.sources import resolve

from .support import turns
from .support.eventstream_turns import event, frame
from .support.gemini_turns import chunk
from .support.wire_samples import ndjson, ollama_line

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_GOOD_SSE = turns.anthropic(text=["Hi"], calls=[("t", ['{"a": ', '"b"}'])])
_GOOD_ES = event("messageStart", '{"role":"assistant"}')
_GEMINI = json.dumps(chunk({"text": "a"})).encode()

# framing -> (its first piece, which shows the format; good pieces; problem pieces; an end
# that is itself a problem, or nothing). Problem pieces are of every kind the framing and
# the decoder find: the framing's own (bytes, structure), bad JSON, a payload the format's
# reader refuses.
FRAMINGS: dict[str, tuple[bytes, list[bytes], list[bytes], list[bytes]]] = {
    "sse": (
        _GOOD_SSE[: _GOOD_SSE.index(b"\n\n") + 2],
        [b'event: ping\ndata: {"type": "ping"}\n\n', b'data: {"hello": 1}\n\n', b": c\n\n"],
        [b"data: {bad\n\n", b"junk line\n\n", b'data: {"type":"ping","x":"\xc3("}\n\n',
         b'event: \xff\ndata: {"type": "ping"}\n\n', b"retry: " + b"9" * 30 + b"\n\n",
         b'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": {}}\n\n',
         b"\x00\x01binary\n\n"],
        [b"", b"data: {", b"event: ping\n"],
    ),
    "ndjson": (
        ndjson(ollama_line("a")),
        [ndjson(ollama_line("b")), b"\n", b"  \r\n"],
        [b"{bad\n", b'{"a":"\x00"}\n', b'{"a":"\xff"}\n', b'{"model":"m","message":5}\n',
         b'"just a string"\n'],
        [b"", b'{"a":'],
    ),
    "jsonarray": (
        b"[" + _GEMINI,
        [b",\r\n" + _GEMINI, b" ,\n" + _GEMINI],
        [b",{bad}", b',{"a":"\xff"}', b',{"candidates":5}', b",[1,2]"],
        [b"]", b"", b",{", b"]x", b"X"],
    ),
    "eventstream": (
        _GOOD_ES,
        [event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"x"}}')],
        [event("contentBlockDelta", "{bad"), frame(b"", b"{}", message_crc=0),
         event("e", extra=bytes([2]) + b"\xffa" + bytes([0])), event("e", b'{"a":"\xff"}'),
         event("contentBlockDelta", '{"delta":{"text":"x"}}'),
         event("e", extra=bytes([1]) + b"x" + bytes([42]))],
        [b"", b"\x00\x00\x00\x30\x00", frame(b"", b"{}", prelude_crc=0)],
    ),
}


@st.composite
def captures(draw: st.DrawFn, framing: str) -> bytes:
    """The framing's first piece, then good and (at least two) problem pieces in any order,
    then an end."""
    first, good, bad, ends = FRAMINGS[framing]
    problems = draw(st.lists(st.sampled_from(bad), min_size=2, max_size=4))
    fill = draw(st.lists(st.sampled_from(good), max_size=4))
    pieces = draw(st.permutations(problems + fill))
    return first + b"".join(pieces) + draw(st.sampled_from(ends))


@st.composite
def cuts(draw: st.DrawFn, body: bytes) -> list[bytes]:
    """``body`` cut at random points (1-byte pieces among them)."""
    if draw(st.booleans()):
        return [body[i:i + 1] for i in range(len(body))]
    points = sorted(draw(st.sets(st.integers(1, max(1, len(body) - 1)), max_size=12)))
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True) if b > a]


def _first_problem(body: bytes) -> tuple[int, str]:
    errors = load(body, strict=False, name="cap").query("kind == 'error'")
    assert len(errors), "every capture drawn holds a problem"
    return int(errors.offset.iloc[0]), str(errors.problem.iloc[0])


def _raised(read: Callable[[], object]) -> tuple[int, str]:
    with pytest.raises(CaptureError) as e:
        read()
    assert e.value.source == "cap"
    return e.value.offset, e.value.reason


def _decoded(pieces: list[bytes]) -> None:
    dec = EventDecoder("cap")
    for piece in pieces:
        dec.feed(piece)
    dec.close()


def _check(framing: str, data: st.DataObject) -> None:
    body = data.draw(captures(framing), label="body")
    first = _first_problem(body)
    assert _raised(lambda: load(body, name="cap")) == first  # whole: the fast path first
    assert _raised(lambda: load_captures(resolve(body, "cap"), bulk=False)) == first
    pieces = data.draw(cuts(body), label="pieces")
    assert _raised(lambda: _decoded(pieces)) == first


@pytest.mark.parametrize("framing", FRAMINGS)
@FUZZ
@given(data=st.data())
def test_strict_raises_at_lenient_first_problem_in_any_chunking(framing: str,
                                                                data: st.DataObject) -> None:
    _check(framing, data)


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_later_framing_problem_does_not_overtake_an_earlier_bad_json_frame(
        framing: str) -> None:
    """The audit's case: bad JSON, then a problem the framing finds, read in one piece."""
    first, _, bad, _ = FRAMINGS[framing]
    body = first + bad[0] + bad[1]
    offset = len(first) + (1 if framing == "jsonarray" else 0)  # (after the comma)
    whole = _raised(lambda: load(body, name="cap"))
    assert whole[0] == offset and whole[1].startswith("invalid JSON in data")
    assert _raised(lambda: _decoded([body[i:i + 1] for i in range(len(body))])) == whole


@pytest.mark.parametrize("framing", FRAMINGS)
@FUZZ
@given(data=st.data())
def test_a_strict_framing_raises_at_its_lenient_first_problem_frame(framing: str,
                                                                    data: st.DataObject) -> None:
    """The framings alone (``frames()``, ``decode_any``): the same rule, frame for row."""
    body = data.draw(captures(framing), label="body")
    pieces = data.draw(cuts(body), label="pieces")
    problems = [f for f in decode_any(pieces, "cap", strict=False) if f.problem is not None]
    try:
        list(decode_any(pieces, "cap"))
    except CaptureError as e:
        assert (e.offset, e.reason) == (problems[0].offset, problems[0].problem)
    else:
        assert not problems
