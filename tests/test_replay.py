"""The byte layer's tape, replayed to every handler (``streamcalls_lab._replay``): what a
handler gets from it is what its own decoder would have given, whichever way it asks."""

from __future__ import annotations

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
