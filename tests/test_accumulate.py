"""The correct Accumulator: events and bytes give the same calls; only the stop finishes one."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import streamcalls_lab as scl
from streamcalls_lab.accumulate import Accumulator, CallKey
from streamcalls_lab.check import Call, Text, turn_bytes, two_choice_calls, two_choice_turn

from .conftest import capture_files

TURN = turn_bytes("anthropic-messages", [
    Text(("Voilà ", "— 東京")),
    Call("lookup", "toolu_1", ('{"city": "Zü', 'rich", "n": 2', "0}")),
])


def _finish_from_events(body: bytes) -> list[dict]:
    acc = Accumulator()
    for event in scl.load(body, strict=False).to_dict("records"):
        acc.feed(event)
    return acc.finish()


@functools.cache
def _capture_finished_from_events(path: Path) -> tuple[dict, ...]:
    """What feeding a real capture's events hands on: both per-capture tests compare
    against it, so it is loaded and fed once per capture (copies are handed out)."""
    return tuple(_finish_from_events(path.read_bytes()))


def _capture_finish_from_events(path: Path) -> list[dict]:
    return [dict(call) for call in _capture_finished_from_events(path)]


def _finish_from_bytes(body: bytes, size: int) -> list[dict]:
    acc = Accumulator()
    for at in range(0, len(body), size):
        acc.feed_bytes(body[at:at + size])
    return acc.finish()


def test_feed_bytes_in_any_chunking_equals_feeding_events() -> None:
    expected = _finish_from_events(TURN)
    assert all(_finish_from_bytes(TURN, n) == expected for n in (1, 2, 3, 5, 64))


def test_a_read_that_splits_a_character_is_held_not_decoded() -> None:
    cut = TURN.index("ü".encode()) + 1
    acc = Accumulator()
    acc.feed_bytes(TURN[:cut])
    acc.feed_bytes(TURN[cut:])
    assert acc.finish()[0]["args"] == '{"city": "Zürich", "n": 20}'


def test_a_call_without_its_stop_is_never_handed_on() -> None:
    body = turn_bytes("openai-chat", [Call("lookup", "call_1", ('{"a": 1}',))], cut=True)
    assert _finish_from_bytes(body, 7) == []


def test_snapshot_is_a_copy_that_later_events_do_not_change() -> None:
    acc = Accumulator()
    events = scl.load(TURN).to_dict("records")
    for event in events[:-3]:
        acc.feed(event)
    before = acc.snapshot()
    for event in events[-3:]:
        acc.feed(event)
    assert before.finished == () and acc.snapshot().finished != ()


def test_snapshot_shows_message_and_buffers_by_choice_and_block() -> None:
    acc = Accumulator()
    for event in scl.load(TURN).to_dict("records"):
        acc.feed(event)
    snap = acc.snapshot()
    assert (snap.message, snap.buffers) == ("Voilà — 東京", {
        CallKey(None, 1): '{"city": "Zürich", "n": 20}'})


TWO_CHOICES = [Call("get_weather", "call_a", ('{"x":', "1}")),
               Call("get_weather", "call_b", ('{"y":', "2}"))]


def test_two_choices_with_a_call_at_index_0_each_keep_their_own_calls() -> None:
    body = two_choice_turn(TWO_CHOICES)
    assert _finish_from_bytes(body, 5) == _finish_from_events(body)
    assert [{k: c[k] for k in ("block", "choice", "call_id", "tool", "args")}
            for c in _finish_from_events(body)] == two_choice_calls(TWO_CHOICES)


def test_a_choices_finish_closes_only_its_own_calls() -> None:
    acc = Accumulator()
    events = scl.load(two_choice_turn(TWO_CHOICES)).to_dict("records")
    first_finish = next(i for i, e in enumerate(events)
                        if e["kind"] == "block_stop" and e["choice"] == 0)
    for event in events[:first_finish + 1]:
        acc.feed(event)
    assert [(c["choice"], c["args"]) for c in acc.snapshot().finished] == [(0, '{"x":1}')]


@pytest.mark.captures
@pytest.mark.parametrize("path", capture_files(), ids=lambda p: p.stem[:60])
def test_finish_equals_calls_complete_args_for_every_capture(captures: Path,
                                                             path: Path) -> None:
    table = scl.calls(path, strict=False)
    expected = list(table.loc[table["complete"], "args"])
    assert [c["args"] for c in _capture_finish_from_events(path)] == expected


@pytest.mark.captures
@pytest.mark.parametrize("path", capture_files(), ids=lambda p: p.stem[:60])
def test_feed_bytes_matches_events_for_every_capture(captures: Path, path: Path) -> None:
    body = path.read_bytes()
    assert _finish_from_bytes(body, 7) == _capture_finish_from_events(path)


def test_each_choices_text_is_its_own_message_never_interleaved() -> None:
    body = two_choice_turn([[Text(("Paris ", "first.")), TWO_CHOICES[0]],
                            [Text(("Rome ", "then.")), TWO_CHOICES[1]]])
    acc = Accumulator()
    acc.feed_bytes(body)
    acc.finish()
    assert acc.message == "Paris first.Rome then."
    assert acc.texts == {0: ["Paris ", "first."], 1: ["Rome ", "then."]}


def test_turn_records_are_each_turns_rows_as_a_groupby_gives_them(captures: Path) -> None:
    """`turn_records` converts a whole table once (a `to_dict` per turn made coverage of the
    real captures take seconds): the same turns, in the same order, with the same rows, as
    pandas' groupby over turn and provider, on every real capture and on a table whose
    turns interleave."""
    from streamcalls_lab.accumulate import FED, turn_records

    table = scl.load(captures, strict=False)
    interleaved = table.iloc[[*range(0, len(table), 2), *range(1, len(table), 2)]]
    for t in (table, interleaved):
        want = [(turn, provider, group[[*FED, "seq"]].to_dict("records"))
                for (turn, provider), group in t.groupby(["turn", "provider"], sort=False,
                                                         observed=True)]
        got = list(turn_records(t, [*FED, "seq"]))
        assert [g[:2] for g in got] == [w[:2] for w in want]
        assert repr(got) == repr(want)  # NaN == NaN only as written
