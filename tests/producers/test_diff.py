"""diff(): what a gateway changed between two captures of one turn.

Each pair is one turn written by the kit's writers, once as sent and once through a small
function that does what a gateway was seen doing (merge two calls into one buffer, split one,
drop one, cut the stream, reorder, re-index, alter an argument, rename, re-id, rewrite the
text); the real captures are held against themselves and their own re-chunking. One
behaviour per test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import streamcalls_lab as scl
from streamcalls_lab import cli, turns
from streamcalls_lab.fixtures import resplit
from streamcalls_lab.producers import DIFF_COLUMNS, diff
from streamcalls_lab.turns import Call, Script, Text

from ..conftest import capture_files

FORMATS = ("openai-chat", "anthropic-messages", "openai-responses")
TURN = Script((
    Text(("Let me ", "check.")),
    Call("get_weather", "call_1", ('{"city": "Zü', 'rich", "days": 3}')),
    Call("get_time", "call_2", ('{"tz": ', '"UTC"}')),
))


def _segments(turn: Script, *segments: Any) -> Script:
    return replace(turn, segments=tuple(segments))


def _call(turn: Script, n: int, **change: Any) -> Script:
    segments = list(turn.segments)
    segments[n] = replace(segments[n], **change)
    return replace(turn, segments=tuple(segments))


def merge(t: Script) -> Script:
    """Two calls sent as one buffer (a gateway that keys calls by index alone)."""
    text, first, second = t.segments
    return _segments(t, text, replace(first, fragments=first.fragments + second.fragments))


def split(t: Script) -> Script:
    """One call's fragments sent as two calls."""
    text, first, second = t.segments
    return _segments(t, text, replace(first, fragments=first.fragments[:1]),
                     replace(first, call_id="call_1b", fragments=first.fragments[1:]), second)


CHANGES: dict[str, tuple[Callable[[Script], Script], str]] = {
    "merged": (merge, "merged"),
    "split": (split, "split"),
    "dropped": (lambda t: _segments(t, t.segments[0], t.segments[2]), "dropped"),
    "cut": (lambda t: replace(t, cut=True), "truncated"),
    "reordered": (lambda t: _segments(t, t.segments[0], t.segments[2], t.segments[1]),
                  "reordered"),
    "re-indexed": (lambda t: replace(t, quirks=frozenset({"index_reuse"})), "reindexed"),
    "altered": (lambda t: _call(t, 1, fragments=('{"city": "Zürich", "days": 4}',)),
                "arguments"),
    "renamed": (lambda t: _call(t, 2, tool="get_clock"), "name"),
    "re-id": (lambda t: _call(t, 2, call_id="call_9"), "id"),
    "text": (lambda t: _call(t, 0, fragments=("Let me ", "look.")), "text"),
}


def _kinds(a: bytes, b: bytes) -> set[str]:
    table = diff(a, b)
    assert tuple(table.columns) == DIFF_COLUMNS
    return set(table["kind"].astype(str))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_turn_against_itself_is_the_same(fmt: str) -> None:
    body = turns.turn_bytes(fmt, TURN)
    table = diff(body, body)
    assert table.empty and table.attrs["summary"] == "same"


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_each_change_is_reported_as_its_own_kind(fmt: str, change: str) -> None:
    transform, kind = CHANGES[change]
    a, b = turns.turn_bytes(fmt, TURN), turns.turn_bytes(fmt, transform(TURN))
    assert _kinds(a, b) == {kind}


@pytest.mark.parametrize("fmt", FORMATS)
def test_other_cuts_of_the_same_text_are_the_same_re_chunked(fmt: str) -> None:
    recut = _call(_call(TURN, 1, fragments=('{"ci', 'ty": "Zürich", ', '"days": 3}')),
                  0, fragments=("Let me check.",))
    table = diff(turns.turn_bytes(fmt, TURN), turns.turn_bytes(fmt, recut))
    assert table.empty and table.attrs["rechunked"]
    assert table.attrs["summary"] == ("same, re-chunked: a in 6 fragments, b in 6 "
                                      "(call 0: 2 → 3; text: 2 → 1)")


def test_a_turn_in_two_formats_is_the_same() -> None:
    """Anthropic in, Chat out: the blocks mean other things (a text block counts in
    Anthropic, not in Chat), so they are not compared."""
    table = diff(turns.turn_bytes("anthropic-messages", TURN), turns.turn_bytes("openai-chat",
                                                                               TURN))
    assert table.empty and table.attrs["formats"] == {"a": "anthropic-messages",
                                                      "b": "openai-chat"}


def test_a_call_altered_across_formats_names_the_key() -> None:
    b = turns.turn_bytes("openai-chat", CHANGES["altered"][0](TURN))
    table = diff(turns.turn_bytes("anthropic-messages", TURN), b)
    assert table["detail"].tolist() == ["key days: a sends 3, b 4"]


def test_a_merge_says_which_calls_share_the_buffer() -> None:
    table = diff(turns.turn_bytes("openai-chat", TURN), turns.turn_bytes("openai-chat",
                                                                         merge(TURN)))
    assert table["detail"].tolist() == [
        "calls 0 to 1 of a (get_weather, get_time) are one call in b (get_weather), their "
        "arguments in one buffer"]


def test_a_dropped_call_does_not_re_index_the_calls_after_it() -> None:
    """Chat counts calls: the next call's index moves with its place, which is no re-index."""
    dropped = CHANGES["dropped"][0](TURN)
    table = diff(turns.turn_bytes("openai-chat", TURN), turns.turn_bytes("openai-chat",
                                                                         dropped))
    assert table["kind"].astype(str).tolist() == ["dropped"]


def test_a_cut_call_says_how_much_of_it_came() -> None:
    cut = replace(_call(TURN, 2, fragments=('{"tz": ', '"UT')), cut=True)
    table = diff(turns.turn_bytes("anthropic-messages", TURN),
                 turns.turn_bytes("anthropic-messages", cut))
    assert table["detail"].tolist() == [
        "call 1 in b has the first 10 of 13 characters of its arguments, and never finished",
        "b's turn ends with no end-of-turn event"]


def test_ids_a_gateway_keeps_say_which_call_is_which() -> None:
    """Each call's arguments moved one call on: by content the first call was dropped and
    one added, but the ids say every call is there, altered."""
    counted = _segments(TURN, *(Call("count", f"call_{n}", (f'{{"n": {n}}}',)) for n in range(4)))
    moved = _segments(TURN, *(Call("count", f"call_{n}", (f'{{"n": {n + 1}}}',))
                              for n in range(4)))
    table = diff(turns.turn_bytes("openai-chat", counted), turns.turn_bytes("openai-chat", moved))
    assert table["kind"].astype(str).tolist() == ["arguments"] * 4


def test_a_call_only_b_has_is_added() -> None:
    extra = _segments(TURN, *TURN.segments, Call("get_news", "call_3", ("{}",)))
    assert _kinds(turns.turn_bytes("openai-chat", TURN),
                  turns.turn_bytes("openai-chat", extra)) == {"added"}


@pytest.fixture(scope="module")
def real(captures: Path) -> list[Path]:
    """One real recording with two finished calls of some length, per main format."""
    out = []
    for fmt in FORMATS:
        for path in capture_files(fmt):
            table = scl.calls(path)
            if len(table) >= 2 and table["complete"].all() and table["chars"].min() > 20:
                out.append(path)
                break
    assert len(out) == len(FORMATS)
    return out


def test_a_real_capture_against_itself_is_the_same(real: list[Path]) -> None:
    assert [diff(p, p).attrs["summary"] for p in real] == ["same"] * len(real)


def test_a_real_capture_against_its_own_re_chunking_is_the_same_re_chunked(
        real: list[Path]) -> None:
    for path in real:
        table = diff(path, resplit(path, [3, 9, 10]))
        assert table.empty and table.attrs["summary"].startswith("same, re-chunked: ")


# -- the command -----------------------------------------------------------------------------
def _pair(tmp: Path, a: bytes, b: bytes) -> list[str]:
    (tmp / "a.sse").write_bytes(a)
    (tmp / "b.sse").write_bytes(b)
    return [str(tmp / "a.sse"), str(tmp / "b.sse")]


def test_the_command_exits_0_and_says_re_chunked(tmp_path, capsys) -> None:
    recut = _call(TURN, 2, fragments=('{"tz": "UTC"}',))
    args = _pair(tmp_path, turns.turn_bytes("openai-chat", TURN),
                 turns.turn_bytes("openai-chat", recut))
    assert cli.main(["diff", *args]) == 0
    assert capsys.readouterr().out.rstrip().endswith(
        "(openai-chat): same, re-chunked: a in 6 fragments, b in 5 (call 1: 2 → 1)")


def test_the_command_exits_1_with_a_table_of_differences(tmp_path, capsys) -> None:
    args = _pair(tmp_path, turns.turn_bytes("openai-chat", TURN),
                 turns.turn_bytes("openai-chat", CHANGES["renamed"][0](TURN)))
    assert cli.main(["diff", *args]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("(openai-chat): 1 difference")
    assert out[1].split() == ["name", "call", "1", "call", "1", "is", "named", "'get_time'",
                              "in", "a,", "'get_clock'", "in", "b"]


def test_the_command_shows_captured_text_inert(tmp_path, capsys) -> None:
    args = _pair(tmp_path, turns.turn_bytes("openai-chat", TURN),
                 turns.turn_bytes("openai-chat", _call(TURN, 0, fragments=("\u202eevil",))))
    assert cli.main(["diff", *args]) == 1
    out = capsys.readouterr().out
    assert "\u202e" not in out and "b: \\u202eevil" in out


def test_the_command_gives_json_for_machines(tmp_path, capsys) -> None:
    args = _pair(tmp_path, turns.turn_bytes("openai-responses", TURN),
                 turns.turn_bytes("openai-responses", merge(TURN)))
    assert cli.main(["diff", *args, "--json"]) == 1
    said = json.loads(capsys.readouterr().out)
    assert said["same"] is False and [d["kind"] for d in said["differences"]] == ["merged"]


def test_the_command_exits_2_for_a_missing_capture(tmp_path, capsys) -> None:
    assert cli.main(["diff", str(tmp_path / "a.sse"), str(tmp_path / "b.sse")]) == 2
    assert "a.sse" in capsys.readouterr().err


def test_the_command_exits_2_for_a_folder_of_several_turns(tmp_path, capsys) -> None:
    one = turns.turn_bytes("openai-chat", TURN)
    _pair(tmp_path, one, one)
    assert cli.main(["diff", str(tmp_path), str(tmp_path / "a.sse")]) == 2
    assert "holds 2 turns" in capsys.readouterr().err
