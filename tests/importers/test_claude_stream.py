"""Claude Code / Agent SDK stream-json: one capture per API call, read as the wire's events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamcalls_lab import CaptureError, calls, load, provenance
from streamcalls_lab.importers import import_file, streams

from ..conftest import CAPTURES
from ..support import turns

FIRST = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"city": "Par', 'is"}'])])
SECOND = turns.anthropic(calls=[("search", ['{"q"', ': "x"}']), ("read", ["{}"])])


def _events(body: bytes | pd.DataFrame) -> list[dict[str, Any]]:
    """The Messages events of an SSE body (or of its ``load(raw=True)`` table), as the CLI
    parsed them."""
    deltas = body if isinstance(body, pd.DataFrame) else load(body, raw=True)
    frames = deltas.drop_duplicates("frame")  # a frame can give several rows
    return [json.loads(d) for d in frames["data"] if d and d.startswith("{")]


def _line(event: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "session_id": "sess-1",
            "parent_tool_use_id": parent, "uuid": "u"}


def _assistant(body: bytes) -> dict[str, Any]:
    """The whole message Claude Code prints after the deltas (repeating their blocks)."""
    content = [{"type": "tool_use", "id": c.call_id, "name": c.tool, "input": json.loads(c.args)}
               for c in calls(body).itertuples()]
    msg_id = _events(body)[0]["message"]["id"]
    return {"type": "assistant", "session_id": "sess-1", "parent_tool_use_id": None,
            "message": {"id": msg_id, "role": "assistant", "content": content}}


def _ndjson(tmp_path: Path, lines: list[dict[str, Any]], name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _run(*bodies: bytes) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [{"type": "system", "subtype": "init", "session_id": "sess-1",
                                    "model": "claude-x", "tools": []}]
    for body in bodies:
        lines += [_line(e) for e in _events(body)]
        lines.append(_assistant(body))
        lines.append({"type": "user", "session_id": "sess-1", "message": {"content": []}})
    lines.append({"type": "result", "subtype": "success", "session_id": "sess-1"})
    return lines


def _same_calls(got: Any, want: bytes) -> None:
    cols = ["tool", "args", "complete"]
    assert got[cols].reset_index(drop=True).equals(calls(want)[cols].reset_index(drop=True))


def test_each_api_call_becomes_one_capture_and_whole_messages_are_not_counted_again(
    tmp_path: Path,
) -> None:
    written = import_file(_ndjson(tmp_path, _run(FIRST, SECOND)), tmp_path / "out")
    assert [p.name for p in written] == ["run__m0.sse", "run__m1.sse"]
    _same_calls(calls(written[0]), FIRST)
    _same_calls(calls(written[1]), SECOND)
    assert len(calls(tmp_path / "out")) == 3  # the assistant lines added none
    assert not (load(tmp_path / "out", strict=False)["kind"] == "error").any()


def test_an_imported_capture_says_it_was_rebuilt_in_provenance_and_in_load(
    tmp_path: Path,
) -> None:
    (path,) = import_file(_ndjson(tmp_path, _run(FIRST)), tmp_path / "out")
    meta = provenance.read(path) or {}
    assert meta["source"] == "claude-stream-json" and "timing" in meta["rebuilt"]
    assert load(tmp_path / "out").attrs["rebuilt"] == {"run__m0": meta["rebuilt"]}
    assert "rebuilt" not in load(FIRST).attrs


def test_a_subagent_stream_interleaved_with_its_parent_is_kept_apart(tmp_path: Path) -> None:
    parent, child = _events(FIRST), _events(SECOND)
    lines = []
    for i in range(max(len(parent), len(child))):  # one event of each in turn
        if i < len(parent):
            lines.append(_line(parent[i]))
        if i < len(child):
            lines.append(_line(child[i], parent="toolu_task"))
    written = import_file(_ndjson(tmp_path, lines), tmp_path / "out")
    assert len(written) == 2
    _same_calls(calls(written[0]), FIRST)
    _same_calls(calls(written[1]), SECOND)
    assert (provenance.read(written[1]) or {})["parent_tool_use_id"] == "toolu_task"


def test_blocks_a_message_start_already_carries_are_read_by_their_index(tmp_path: Path) -> None:
    events = _events(FIRST)
    start = next(e for e in events if e["type"] == "content_block_start"
                 and e["content_block"]["type"] == "tool_use")
    events[0]["message"]["content"] = [{"type": "text", "text": ""},
                                       {**start["content_block"], "input": {}}]
    events = [e for e in events if e is not start]  # announced only by the message_start
    written = import_file(_ndjson(tmp_path, [_line(e) for e in events]), tmp_path / "out")
    _same_calls(calls(written[0]), FIRST)
    assert not (load(written[0], strict=False)["kind"] == "error").any()


def test_only_whole_messages_is_refused_saying_how_to_keep_the_fragments(
    tmp_path: Path,
) -> None:
    lines = [x for x in _run(FIRST) if x["type"] != "stream_event"]
    with pytest.raises(CaptureError, match="--include-partial-messages"):
        import_file(_ndjson(tmp_path, lines), tmp_path / "out")


@pytest.mark.parametrize("shape", ["array", "messages", "per_call"])
def test_events_kept_in_json_are_read_as_well(tmp_path: Path, shape: str) -> None:
    lines = _run(FIRST, SECOND)
    doc: Any = {
        "array": lines,
        "messages": {"session": "s", "messages": lines},
        "per_call": {"calls": [{"id": 1, "events": _events(FIRST)},
                               {"id": 2, "events": _events(SECOND)}]},
    }[shape]
    path = tmp_path / "kept.json"
    path.write_text(json.dumps(doc))
    written = import_file(path, tmp_path / "out")
    assert len(written) == 2
    _same_calls(calls(written[0]), FIRST)
    _same_calls(calls(written[1]), SECOND)


def test_a_run_cut_mid_message_is_kept_cut_and_loads_with_an_error_row(tmp_path: Path) -> None:
    lines = [_line(e) for e in _events(FIRST)]
    (path,) = import_file(_ndjson(tmp_path, lines[:-3]), tmp_path / "out")
    assert "message_stop" in (provenance.read(path) or {})["cut_off"]
    df = load(path, strict=False)
    assert df["kind"].iloc[-1] == "error" and "broke off" in df["problem"].iloc[-1]
    assert not calls(df)["complete"].all()


def test_a_corrupt_line_names_the_file_line_and_byte(tmp_path: Path) -> None:
    path = _ndjson(tmp_path, _run(FIRST))
    raw = path.read_bytes()
    lines = raw.splitlines(keepends=True)
    at = sum(len(x) for x in lines[:3])
    path.write_bytes(b"".join(lines[:3]) + lines[3][:20])  # the file cut inside line 4
    with pytest.raises(CaptureError, match=rf"run.jsonl: byte {at}: line 4 is not JSON"):
        list(streams(path))


def test_an_anthropic_chunk_log_is_still_a_chunk_log_not_stream_json(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _events(FIRST)))
    (s,) = streams(path)
    assert s.meta["source"] == "jsonl"


def test_json_with_no_events_is_refused_naming_what_was_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    with pytest.raises(CaptureError, match="stream-json"):
        list(streams(path))


@pytest.mark.captures
def test_every_real_anthropic_capture_survives_the_stream_json_round_trip(
    tmp_path: Path,
) -> None:
    real = sorted((CAPTURES / "anthropic-messages").glob("*.sse"))
    if not real:
        pytest.skip("no real Anthropic captures")
    checked = 0
    for n, cap in enumerate(real):
        body = cap.read_bytes()
        deltas = load(body, strict=False, raw=True)  # once: the corpus is large
        if deltas["provider"].astype(str).ne("anthropic-messages").any():
            continue  # a capture the kit reads as another format or with problems
        if (deltas["kind"] == "error").any():
            continue
        lines = [_line(e) for e in _events(deltas)]
        written = import_file(_ndjson(tmp_path, lines, f"r{n}.jsonl"), tmp_path / "out")
        got = calls(tmp_path / "out" / written[0].name)
        cols = ["tool", "args", "complete"]
        assert got[cols].equals(calls(deltas)[cols]), cap.name
        checked += 1
    assert checked > 10


def test_a_wire_measure_over_rebuilt_turns_warns_and_over_real_ones_does_not(
    tmp_path: Path,
) -> None:
    from streamcalls_lab import stats
    from streamcalls_lab._rebuilt import RebuiltWarning

    import_file(_ndjson(tmp_path, _run(FIRST)), tmp_path / "out")
    with pytest.warns(RebuiltWarning, match="run__m0"):
        stats.size_summary(load(tmp_path / "out"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RebuiltWarning)
        stats.size_summary(load(FIRST))


def test_the_import_verb_takes_each_new_kind_and_names_a_bad_file_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from streamcalls_lab import cli

    good = _ndjson(tmp_path, _run(FIRST))
    bad = tmp_path / "bad\x1b[31m.jsonl"  # a hostile name must not act on the terminal
    bad.write_bytes(json.dumps(_line(_events(FIRST)[0])).encode() + b"\n{cut")
    code = cli.main(["import", str(good), str(bad), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "\x1b" not in err
    assert "line 2 is not JSON" in err
    assert [p.name for p in (tmp_path / "out").glob("*.sse")] == ["run__m0.sse"]
