"""The byte layer's tape, replayed to every handler (``streamcalls_lab._replay``): what a
handler gets from it is what its own decoder would have given, whichever way it asks."""

from __future__ import annotations

import pytest

from streamcalls_lab._replay import Replay, Tape
from streamcalls_lab.accumulate import byte_decoder, event_dict
from streamcalls_lab.check import Call, turn_bytes


def _reads() -> tuple[bytes, ...]:
    body = turn_bytes("openai-chat", [Call("get_weather", "call_1",
                                           ('{"city": "Zü', 'rich"}'))])
    return tuple(body[i:i + 3] for i in range(0, len(body), 3))  # cut inside characters too


def _own(reads: tuple[bytes, ...]) -> list[dict]:
    decoder = byte_decoder()
    return [event_dict(d) for r in reads for d in decoder.feed(r)] + [
        event_dict(d) for d in decoder.close()]


def test_a_handler_asking_the_decoder_itself_gets_what_its_own_decoder_gives() -> None:
    reads = _reads()
    replay = Replay(Tape(reads))
    got = [event_dict(d) for r in reads for d in replay.feed(r)]
    assert got + [event_dict(d) for d in replay.close()] == _own(reads)


def test_reads_that_differ_from_the_tape_are_decoded_then_the_tape_taken_again() -> None:
    reads = _reads()
    replay = Replay(Tape(reads))
    joined = (reads[0] + reads[1], *reads[2:])  # the first two reads held back as one
    got = [dict(e) for r in joined for e in replay.events(r)]
    assert got + [event_dict(d) for d in replay.close()] == _own(reads)
    assert replay.own is None  # back on the tape


def _recorded(tape: Tape) -> tuple:
    return ({i: [dict(e) for e in es] for i, es in tape.events.items()}, tape.reads, tape.ends,
            tape.closing, tape.body)


def test_a_tape_cut_from_the_bytewise_one_is_the_tape_decoded_at_that_cut() -> None:
    """``check_handler``'s two-read cases take their tape from the turn's one-byte tape: for
    every cut of every turn the byte cases hold (and of a CRLF one, where a line's end is two
    bytes), the events each read completes, the close and the reads are what decoding the
    two reads gives."""
    from streamcalls_lab.check import byte_cases

    bodies = {c.chunks[0] + c.chunks[1] for c in byte_cases() if len(c.chunks) == 2}
    bodies.add(b"".join(_reads()).replace(b"\n", b"\r\n"))
    for body in bodies:
        bytewise = Tape(tuple(body[i:i + 1] for i in range(len(body))))
        for at in range(1, len(body)):
            assert _recorded(Tape.cut(bytewise, at)) == _recorded(
                Tape((body[:at], body[at:]))), (body[max(0, at - 8):at + 8], at)
    with pytest.raises(ValueError, match="one byte"):
        Tape.cut(Tape((b"data: {}\n\n",)), 3)


def test_a_read_that_gives_no_bytes_fails_as_its_own_decoder_fails() -> None:
    """A handler's ``read`` may return text: the replay then hands it to a decoder of the
    handler's own, which raises what it would have raised without the tape (the breaker's,
    ``check_handler``'s and the stepper's reports do not depend on the tape)."""
    reads = _reads()
    text = reads[0].decode("latin-1")
    with pytest.raises(TypeError) as own:
        byte_decoder().feed(text)  # type: ignore[arg-type]
    with pytest.raises(TypeError) as replayed:
        Replay(Tape(reads)).events(text)  # type: ignore[arg-type]
    assert str(replayed.value) == str(own.value)


def test_reads_given_as_other_bytes_like_objects_are_the_tapes() -> None:
    reads = _reads()
    replay = Replay(Tape(reads))
    odd = (bytearray(reads[0]), memoryview(reads[1]), *reads[2:])
    got = [dict(e) for r in odd for e in replay.events(r)]
    assert got + [event_dict(d) for d in replay.close()] == _own(reads)
