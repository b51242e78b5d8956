"""The framing registry: one ordered detection that load, frames, redact and the importers
all read, and each framing's writer, rewriter and media type in its own ``FRAMING``."""

from __future__ import annotations

import json

import pytest

import streamcalls_lab as scl
from streamcalls_lab import turns
from streamcalls_lab.framing import FRAMINGS
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.redact import redact_bytes
from streamcalls_lab.turns import Call, Text

WRITTEN = [name for name, f in FORMATS.items() if f.write is not None]


def _body(fmt: str) -> bytes:
    return turns.turn_bytes(fmt, turns.script([
        Text(("Looking that up.",)), Call("lookup", "call_1", ('{"city": ', '"Paris"}'))]))


def test_an_ollama_body_load_reads_is_redacted_not_refused() -> None:
    body = _body("ollama")
    assert scl.calls(scl.load(body))["tool"].tolist() == ["lookup"]
    out = redact_bytes(body)
    assert len(out) == len(body) and out != body
    assert scl.calls(scl.load(out))["tool"].notna().all()


@pytest.mark.parametrize("fmt", WRITTEN)
def test_load_redact_and_replay_detect_each_formats_own_framing(fmt: str) -> None:
    from streamcalls_lab.framing import AutoDecoder, framing_of
    from streamcalls_lab.traffic.replay import Read, content_type

    body = _body(fmt)
    own = FRAMINGS[FORMATS[fmt].framing]
    dec = AutoDecoder()
    dec.feed(body)
    assert dec.framing is own is framing_of(body)
    # serve and replay send the framing's own media type (the prefixed one raised KeyError)
    assert content_type([Read(0.0, body)]) == own.media_type
    out = redact_bytes(body)
    assert len(out) == len(body)
    assert framing_of(out) is own
    assert len(scl.calls(scl.load(out))) == len(scl.calls(scl.load(body))) == 1


def _decoded(framing, reads) -> list[tuple[str, str]]:
    dec = framing.decoder()
    frames = [f for r in reads for f in dec.feed(r)] + dec.close()
    return [(f.event, f.data) for f in frames]


@pytest.mark.parametrize("fmt", [f for f in WRITTEN if FORMATS[f].framing != "jsonarray"]
                         + ["gemini-as-array"])
def test_every_transport_case_decodes_to_the_frames_written(fmt: str) -> None:
    """A framing's transport cases change only how the frames travel: its own decoder gets
    the same events and data from each (event names aside where a case drops them)."""
    from streamcalls_lab.framing import Served

    name = "gemini" if fmt == "gemini-as-array" else fmt
    framing = FRAMINGS["jsonarray" if fmt == "gemini-as-array" else FORMATS[name].framing]
    frames = turns.write(name, turns.script([
        Text(("Looking that up.",)), Call("lookup", "call_1", ('{"city": ', '"Paris"}'))]))
    want = _decoded(framing, [framing.write(frames)])
    assert len(want) == len(frames)
    seen = set()
    for case in framing.transports(frames, Served()):
        seen.add(case.family)
        got = _decoded(framing, case.reads)
        if case.family == "no_event_lines":
            assert [d for _, d in got] == [d for _, d in want]
        elif case.family == "long_line":
            assert [(e, json.loads(d)) for e, d in got] == [(e, json.loads(d)) for e, d in want]
        else:
            assert got == want, case.family
    assert seen, f"{framing.name} declares no transport case"


def test_turns_body_is_the_framings_own_writer() -> None:
    frames = turns.write("gemini", turns.script([Call("lookup", "call_1", ('{"a":1}',))]))
    for name, framing in FRAMINGS.items():
        if name == "prefixed":
            continue  # its frames need a part code as their event
        assert turns.body("gemini", frames, framing=name) == framing.write(frames)
    with pytest.raises(ValueError, match="unknown framing 'smoke'; known: eventstream"):
        turns.body("gemini", frames, framing="smoke")
