"""The contract every format in the registry is held to, read from its declaration alone.

Each entry of ``providers.FORMATS`` writes a sample turn with its own writer (prose and two
calls whose arguments hold an escape and non-ASCII text) and is then checked the same way:
it loads as itself, its declared events cover its rows, chunking and the fast path change
nothing, redaction keeps every call's geometry and no value, writing and reading back gives
the calls written, and a turn cut off leaves its last call unfinished. A format added the
way ``docs/contract.md`` says (one module, one registry line) is covered here with no other
edit. What each format's events mean in detail is in its own test module.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab.events import KINDS, is_done
from streamcalls_lab.fixtures import resplit, truncate
from streamcalls_lab.framing import decode_any
from streamcalls_lab.providers import FORMATS, INTERLEAVING, READERS, WireFormat
from streamcalls_lab.redact import Redactor
from streamcalls_lab.turns import WireFrame, body, expected_calls, write

from ..support.compare import assert_same
from ..support.format_samples import VALUES, sample
from ..support.wire_samples import (
    WEATHER,
    assert_chunking_changes_nothing,
    assert_registered_and_detected,
    claude_events,
    cohere,
    cohere_events,
    invoke,
    ndjson,
    ollama_turn,
)

NAMES = sorted(FORMATS)
@pytest.fixture(scope="module")
def turns() -> dict[str, tuple[list[WireFrame], bytes]]:
    out = {}
    for name in NAMES:
        frames = write(name, sample(name))
        out[name] = frames, body(name, frames)
    return out


def _calls(table: pd.DataFrame) -> list[dict[str, Any]]:
    rows = table[["block", "call_id", "tool", "args"]].astype(object)
    return rows.where(rows.notna(), None).to_dict("records")


@pytest.mark.parametrize("name", NAMES)
def test_every_format_declares_a_reader_a_writer_and_its_docs(name: str) -> None:
    fmt = FORMATS[name]
    assert fmt.name == fmt.reader.name == name and READERS[name] is fmt.reader
    assert fmt.write is not None and fmt.docs.startswith("https://")
    assert set(fmt.events) <= set(KINDS)


@pytest.mark.parametrize("name", NAMES)
def test_a_written_turn_loads_as_its_format(turns, name: str) -> None:
    df = scl.load(turns[name][1])
    assert set(df.provider) == {name}
    assert {"call_start", "args_delta", "block_stop", "text_delta", "turn_stop"} <= set(df.kind)


@pytest.mark.parametrize("name", NAMES)
def test_the_declared_events_cover_every_row(turns, name: str) -> None:
    df = scl.load(turns[name][1])
    undeclared = {(k, e) for k, e in zip(df.kind.astype(str), df.event, strict=True)
                  if e not in FORMATS[name].events.get(k, ())}
    assert not undeclared


@pytest.mark.parametrize("name", NAMES)
def test_writing_and_reading_back_gives_the_calls_written(turns, name: str) -> None:
    frames, raw = turns[name]
    table = scl.calls(raw)
    assert _calls(table) == expected_calls(frames, sample(name))
    assert table.complete.all() and table.valid_json.all()


@pytest.mark.parametrize("name", [n for n in NAMES if n in INTERLEAVING])
def test_interleaved_calls_read_back_as_written(name: str) -> None:
    turn = dataclasses.replace(sample(name, interleave=True),
                               segments=sample(name).segments[1:])  # only calls interleave
    frames = write(name, turn)
    assert _calls(scl.calls(body(name, frames))) == expected_calls(frames, turn)


@pytest.mark.parametrize("name", [n for n in NAMES if not FORMATS[n].calls_whole])
def test_a_turn_cut_off_leaves_its_last_call_unfinished(name: str) -> None:
    turn = sample(name, cut=True)
    frames = write(name, turn)
    table = scl.calls(body(name, frames), strict=False)
    assert len(table) == 2 and not table.complete.iloc[-1]  # (Chat's finish ends both)
    assert table.args.iloc[-1] == turn.calls[-1].args
    assert _calls(table)[:1] == expected_calls(frames, turn)


@pytest.mark.parametrize("name", NAMES)
def test_chunking_changes_nothing(turns, name: str) -> None:
    assert_chunking_changes_nothing(turns[name][1])


@pytest.mark.parametrize("name", NAMES)
def test_the_fast_path_gives_the_reference_rows(turns, name: str) -> None:
    assert_same(turns[name][1])


@pytest.mark.parametrize("name", NAMES)
def test_redaction_keeps_every_calls_geometry_and_no_value(turns, name: str) -> None:
    raw = turns[name][1]
    redacted = Redactor("contract").capture(raw, ndjson=FORMATS[name].framing == "ndjson")
    assert len(redacted) == len(raw)
    before, after = scl.calls(raw), scl.calls(redacted)
    cols = ["block", "n_deltas", "chars", "wire_chars", "valid_json", "complete"]
    pd.testing.assert_frame_equal(after[cols], before[cols])
    assert after.call_id.nunique() == before.call_id.nunique() == 2
    rows = scl.load(redacted)
    said = "\n".join([*after.args, *after.call_id, *rows.fragment.dropna(),
                      redacted.decode("utf-8", "replace")])
    for secret in (*VALUES, *before.call_id):
        assert secret not in said, secret


@pytest.mark.parametrize("name", [n for n in NAMES if not FORMATS[n].calls_whole
                                  and FORMATS[n].framing != "eventstream"])
def test_a_turn_is_re_cut_and_cut_off_by_its_declaration(turns, name: str) -> None:
    raw = turns[name][1]
    args = scl.calls(raw).args[0]
    recut = scl.load(resplit(raw, [5, 14, 20], call=0))
    block = recut.block[recut.kind == "call_start"].iloc[0]
    first = recut[(recut.kind == "args_delta") & (recut.block == block).fillna(False)]
    assert [f for f in first.fragment.fillna("") if f] == [
        args[:5], args[5:14], args[14:20], args[20:]]
    cut = scl.calls(truncate(raw, call=-1), strict=False)
    assert len(cut) == 2 and not cut.complete.iloc[-1]


@pytest.mark.parametrize("name", [n for n in NAMES if FORMATS[n].calls_whole])
def test_a_format_that_sends_calls_whole_cannot_be_cut_inside_one(turns, name: str) -> None:
    with pytest.raises(ValueError, match="sends each call whole"):
        truncate(turns[name][1])


# -- turns written from the documentation, not by the kit's writers ------------------------------
DOCUMENTED = {  # provider: a turn with several calls, as its documentation shows one
    "bedrock-invoke": invoke(*claude_events(WEATHER[1:], text="ok")),
    "cohere-chat": cohere(*cohere_events(WEATHER[1:], plan="a b")),
    "ollama": ndjson(*ollama_turn()),
}


@pytest.mark.parametrize("provider", DOCUMENTED)
def test_a_documented_turn_is_detected_and_read_the_same_in_any_chunking(provider: str) -> None:
    assert_registered_and_detected(DOCUMENTED[provider], provider)
    assert_chunking_changes_nothing(DOCUMENTED[provider])


# -- recognition -----------------------------------------------------------------------------
def _claims(frames: list[Any]) -> list[tuple[str, list[str]]]:
    """Each frame with the readers that claim it (``[DONE]`` and frames no JSON aside)."""
    out = []
    for fr in frames:
        if fr.problem is not None or is_done(fr.data):
            continue  # ([DONE] ends every format's stream: Chat's is the one it shows)
        try:
            payload = orjson.loads(fr.data)
        except orjson.JSONDecodeError:
            continue
        out.append((fr.data[:80], [name for name, reader in READERS.items()
                                   if reader.sniff(fr.event, payload)]))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_a_samples_frames_are_claimed_by_its_reader_alone(turns, name: str) -> None:
    claims = _claims(list(decode_any([turns[name][1]])))
    assert all(who in ([], [name]) for _, who in claims), claims
    assert claims[0][1] == [name]  # the first frame shows the format


@pytest.mark.captures
def test_no_frame_of_a_real_capture_is_claimed_by_two_readers(
        readable_captures: list[Path]) -> None:
    for path in readable_captures:
        frames = decode_any([path.read_bytes()], str(path), strict=False)
        assert all(len(who) <= 1 for _, who in _claims(list(frames))), path


def test_a_format_is_sse_unless_it_declares_another_framing() -> None:
    spec = FORMATS["cohere-chat"]
    declared = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
                if f.name not in ("name", "reader", "framing")}
    assert dataclasses.replace(spec, framing="ndjson") != spec
    assert WireFormat.of(spec.reader, **declared) == spec
    assert WireFormat.of(spec.reader, "ndjson", **declared).framing == "ndjson"
    assert {n: f.framing for n, f in FORMATS.items() if f.framing != "sse"} == {
        "ai-sdk-data": "prefixed", "bedrock-converse": "eventstream",
        "bedrock-invoke": "eventstream", "gemini-live": "ndjson", "ollama": "ndjson",
        "openai-realtime": "ndjson"}


def test_a_block_format_reads_calls_and_text_from_the_same_start_delta_and_stop() -> None:
    from streamcalls_lab.providers.spec import block_events

    events = block_events("start", "delta", "stop", turn_stop=("end",), other=("ping",))
    assert events == {"call_start": ("start",), "args_delta": ("delta", "start"),
                      "block_stop": ("stop",), "text_start": ("start",),
                      "text_delta": ("delta",), "turn_stop": ("end",), "error": ("error",),
                      "other": ("ping", "start", "delta")}
    assert FORMATS["anthropic-messages"].events["other"] == (
        "message_start", "message_delta", "ping", "content_block_start", "content_block_delta")
