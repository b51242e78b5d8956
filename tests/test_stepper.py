"""Stepper: forward and back agree, and each fault diverges where its bug bites."""

from __future__ import annotations

from pathlib import Path

import pytest

import streamcalls_lab as scl
from streamcalls_lab import Stepper
from streamcalls_lab.accumulate import CallKey
from streamcalls_lab.check import Call, Text, turn_bytes, two_choice_turn
from streamcalls_lab.stepper import first_divergence

from .conftest import capture_files

TURN = turn_bytes("anthropic-messages", [
    Text(("Let me ", "look é.")),
    Call("weather", "toolu_1", ('{"city": "Zü', 'rich", "n": 2', "0}")),
    Call("weather", "toolu_2", ('{"note": "see *both*', ' files"}')),
])
CLEAN = turn_bytes("openai-chat", [Call("lookup", "call_1", ('{"city":"Paris"}',))])


def _splitting(body: bytes) -> int:
    """The smallest read size at which some read of ``body`` ends inside a character."""
    inside = [k for k in range(1, len(body)) if body[k] & 0xC0 == 0x80]
    return next(n for n in range(2, 16) if any(k % n == 0 for k in inside))


SMALL = _splitting(TURN)


def test_going_back_gives_exactly_what_going_forward_gave() -> None:
    walked = Stepper(TURN, read_size=SMALL)
    walked.go(len(walked) - 1)
    back = [walked.back() for _ in range(len(walked) - 1)]
    fresh = [Stepper(TURN, read_size=SMALL).go(i) for i in range(len(walked) - 2, -1, -1)]
    assert back == fresh


def test_jumping_to_a_step_equals_walking_to_it() -> None:
    jumped = Stepper(TURN).go(9)
    walker = Stepper(TURN)
    for _ in range(9):
        walker.forward()
    assert walker.step == jumped


def test_forward_and_back_stop_at_the_ends() -> None:
    stepper = Stepper(CLEAN)
    assert stepper.back().index == 0
    stepper.go(len(stepper) - 1)
    assert stepper.forward().index == len(stepper) - 1


def test_a_step_outside_the_turn_is_an_index_error() -> None:
    with pytest.raises(IndexError):
        Stepper(CLEAN).go(999)


def test_no_variant_diverges_on_prose_alone_but_decoding_each_read() -> None:
    body = turn_bytes("openai-responses", [Text(("Hello", " there é."))])
    whole = Stepper(body)
    assert all(not whole.state(i).diverged for i in range(len(whole))) and len(whole) > 4
    small = Stepper(body, read_size=_splitting(body))  # a read ends inside é
    assert {v for i in range(len(small)) for v in small.state(i).diverged} == {"decode_chunks"}


def test_a_whole_call_in_one_fragment_exposes_only_the_surface_early_hand_on_and_id_keys(
        ) -> None:
    diverged = first_divergence(Stepper(CLEAN))
    assert set(diverged) == {"markdown_bubble", "parse_to_finish", "lenient_parse",
                             "key_by_id"}  # no fragment after the announcement names its call


def test_each_bug_diverges_on_this_turn() -> None:
    diverged = first_divergence(Stepper(TURN, read_size=SMALL))
    # (the text block at 0 puts the first call at 1: a list keyed by position raises)
    assert set(diverged) == {"trim", "lenient_parse", "parse_to_finish", "key_by_name",
                             "key_by_id", "decode_chunks", "markdown_bubble",
                             "index_as_position"}


def test_key_by_name_diverges_when_the_second_call_starts() -> None:
    stepper = Stepper(TURN)
    step, reason = first_divergence(stepper)["key_by_name"]
    assert stepper.state(step).event["kind"] == "call_start" and "another call" in reason


def test_decode_chunks_diverges_only_when_a_read_splits_a_character() -> None:
    assert "decode_chunks" not in first_divergence(Stepper(TURN))
    assert "UnicodeDecodeError" in first_divergence(Stepper(TURN, read_size=SMALL))[
        "decode_chunks"][1]


def test_a_step_shows_the_event_its_raw_frame_and_the_buffers() -> None:
    stepper = Stepper(TURN)
    last = stepper.state(len(stepper) - 1)
    assert last.frame.startswith("event: message_stop")
    assert last.buffers == {CallKey(None, 1): '{"city": "Zürich", "n": 20}',
                            CallKey(None, 2): '{"note": "see *both* files"}'}
    assert last.message == "Let me look é."


def test_a_variant_shows_what_it_would_hand_on() -> None:
    stepper = Stepper(TURN)
    step = stepper.state(len(stepper) - 1)
    assert [c["args"] for c in step.variants["key_by_name"].snapshot.finished] == [
        '{"city": "Zürich", "n": 20}{"note": "see *both* files"}']


def test_the_correct_column_keeps_each_of_two_choices_calls_apart() -> None:
    stepper = Stepper(two_choice_turn([Call("get_weather", "call_a", ('{"x":', "1}")),
                                       Call("get_weather", "call_b", ('{"y":', "2}"))]))
    last = stepper.state(len(stepper) - 1)
    assert [(c["choice"], c["args"]) for c in last.finished] == [(0, '{"x":1}'), (1, '{"y":2}')]
    assert last.buffers == {CallKey(0, 0): '{"x":1}', CallKey(1, 0): '{"y":2}'}
    step, reason = first_divergence(stepper)["one_choice"]
    assert stepper.state(step).event["kind"] == "args_delta"  # choice 0's first fragment
    assert reason == "block 0 of choice 1: its buffer already holds another call's arguments"


def test_a_load_dataframe_is_stepped_by_its_events() -> None:
    deltas = scl.load(TURN, name="t1")
    stepper = Stepper(deltas, turn="t1")
    assert len(stepper) == len(deltas) and stepper.state(5).event["seq"] == 5


@pytest.mark.captures
@pytest.mark.parametrize("path", capture_files()[::40], ids=lambda p: p.stem[:60])
def test_the_last_step_hands_on_what_calls_finds(captures: Path, path: Path) -> None:
    stepper = Stepper(path)
    table = scl.calls(path, strict=False)
    last = stepper.state(len(stepper) - 1)
    assert [c["args"] for c in last.finished] == list(table.loc[table["complete"], "args"])


class _Scribbles(scl.Accumulator):
    """Marks every event it is fed: a handler may change what it is given."""

    def feed(self, event: dict) -> None:
        event["seen"] = True
        super().feed(event)


def _decoding_itself(cls: type) -> type:
    """``cls`` with a byte layer of its own (the same code, so not the shared one)."""

    def events_from_bytes(self: scl.Accumulator, chunk: bytes) -> list[dict]:
        return super(own, self).events_from_bytes(chunk)

    own = type(f"Own{cls.__name__}", (cls,), {"events_from_bytes": events_from_bytes})
    return own


CRLF = TURN.replace(b"\n", b"\r\n")


@pytest.mark.parametrize(("body", "read_size"),
                         [(TURN, 1), (TURN, SMALL), (CRLF, 3), (CLEAN, None)],
                         ids=["1", "small", "crlf", "whole"])
def test_a_handler_fed_from_the_shared_tape_is_where_its_own_decoder_takes_it(
        body: bytes, read_size: int | None) -> None:
    """The stepper decodes the reads once and replays them to every handler that reads
    bytes as the base class does; the same handler decoding every read itself is in the
    same state at every step, whether it changes the bytes (``decode_chunks``), raises, or
    writes to the events it is fed."""
    faults = dict(scl.FAULTS) | {"scribbles": _Scribbles}
    both = faults | {f"{name}/own": _decoding_itself(cls) for name, cls in faults.items()}
    stepper = Stepper(body, read_size=read_size, faults=both)
    for i in range(len(stepper)):
        step = stepper.state(i)
        for name in faults:
            assert step.variants[name] == step.variants[f"{name}/own"], (i, name)
