"""The course's diagrams: SVG drawn from the turn on screen, for every registered format, with
every captured string inert and escaped (a fragment can hold markup, quotes, bidi overrides)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import streamcalls_lab as scl
from streamcalls_lab import diagrams
from streamcalls_lab.display import inert
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.turns import Call, Text, script, turn_bytes

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = ('{"q": "<script>alert(1)</script>', ' \u202eevil \\" \'x\' & é', ' 👍", "n": 20}')
TURN = script([Text(("Let me", " look.")), Call("lookup", "call_1", HOSTILE),
               Call("create_ticket", "call_2", ('{"summary": "urgent', " request", '"}'))])


def _load(fmt: str) -> tuple[bytes, object]:
    raw = turn_bytes(fmt, TURN)
    return raw, scl.load(raw, provider=fmt, strict=False)


def _titles(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    return [t.text or "" for t in root.iter(f"{SVG}title")]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_calls_diagram_draws_every_fragment_of_every_call(fmt: str) -> None:
    _raw, deltas = _load(fmt)
    turn = deltas["turn"].iloc[0]
    svg = diagrams.calls_diagram(deltas, turn)
    titles = _titles(svg)
    assert titles[0].startswith("The calls of")  # the accessible name of the whole figure
    sent = [p for p in deltas.loc[deltas["kind"] == "args_delta", "fragment"] if p]
    drawn = [t.split(": ", 1)[1] for t in titles if t.startswith("fragment ")]
    assert drawn == [inert(p) for p in sent]
    got = {c.buffer.args for c in diagrams.turn_calls(deltas, turn)}
    assert got == set(scl.calls(deltas)["args"])
    assert sum(1 for t in titles if t.startswith("stop: ")) == 2


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_layers_diagram_shows_a_character_cut_between_two_reads(fmt: str) -> None:
    raw, deltas = _load(fmt)
    svg = diagrams.layers_diagram(raw, deltas, deltas["turn"].iloc[0])
    titles = _titles(svg)
    alone = [t for t in titles if "decoded on its own" in t]
    kept = [t for t in titles if "incremental decoder" in t]
    assert len(alone) == len(kept) == 2
    assert any("\ufffd" in t for t in alone)  # a cut character, replaced
    assert not any("\ufffd" in t for t in kept)  # held until its last byte came
    assert any(t.startswith("arguments of lookup") for t in titles)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:  # binary framing: the cut is drawn on the text it carries
        assert "framing is binary" in svg


def test_no_captured_string_is_live_in_the_svg() -> None:
    raw, deltas = _load("anthropic-messages")
    svg = diagrams.calls_diagram(deltas, deltas["turn"].iloc[0])
    svg += diagrams.layers_diagram(raw, deltas, deltas["turn"].iloc[0])
    assert "<script" not in svg
    assert "\u202e" not in svg  # drawn as its escape
    assert "&lt;script&gt;" in svg and "\\u202e" in svg


def test_a_turn_name_is_captured_text_too() -> None:
    _raw, deltas = _load("openai-chat")
    deltas["turn"] = '"><script>x</script>'
    svg = diagrams.calls_diagram(deltas, '"><script>x</script>')
    assert "<script" not in svg
    assert _titles(svg)[0] == 'The calls of "><script>x</script>: announcement, fragments, ' \
        "buffer per block, stop"


def test_a_call_whose_stop_never_came_is_drawn_without_one() -> None:
    raw = scl.check.turn_bytes("anthropic-messages", [Call("f", "c1", ('{"a"', ": 1}"))],
                               cut=True)
    deltas = scl.load(raw, provider="anthropic-messages", strict=False)
    titles = _titles(diagrams.calls_diagram(deltas, deltas["turn"].iloc[0]))
    assert any(t.startswith("no stop came") for t in titles)
    assert not any(t.startswith("stop: ") for t in titles)


def test_an_ascii_capture_says_no_read_can_cut_a_character() -> None:
    raw = turn_bytes("openai-chat", script([Call("f", "c1", ('{"a"', ": 1}"))]))
    deltas = scl.load(raw, provider="openai-chat")
    svg = diagrams.layers_diagram(raw, deltas, deltas["turn"].iloc[0])
    assert "every byte of this capture is ASCII" in svg


def test_first_split_finds_the_read_that_ends_inside_a_character() -> None:
    raw = b"ab\xc3\xa9cd\xf0\x9f\x91\x8d"
    assert diagrams.first_split(raw, 3) == diagrams.Split(2, "é", 3)
    assert diagrams.first_split(raw, 2) == diagrams.Split(6, "👍", 8)
    assert diagrams.first_split(b"\xc3(", 1) is None  # not UTF-8: no character to cut
    assert diagrams.split_read_size(b"abcd\xc3\xa9") == 5
