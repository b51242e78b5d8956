"""inspect: per turn who served it, its calls, problems and anomalies; inert; exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from streamcalls_lab import turns
from streamcalls_lab.cli import main
from streamcalls_lab.producers import QUIRKS
from streamcalls_lab.producers.report import report
from streamcalls_lab.producers.served import served_by
from streamcalls_lab.turns import Call, Script, Text

from ..conftest import DATA

HOSTILE = "\x1b[2J\x1b]0;owned\x07\u202eevil"
"""An ANSI clear-screen, a title-setting OSC sequence and a bidi override."""


def _write(path: Path, fmt: str = "openai-chat", **options: object) -> Path:
    segments = options.pop("segments", (Text(("Hi ", "there.")),
                                        Call("get_weather", "call_1", ('{"city": ', '"Paris"}'))))
    path.write_bytes(turns.turn_bytes(fmt, Script(tuple(segments), **options)))
    return path


def test_a_clean_turn_reports_its_calls_and_exits_zero(tmp_path: Path, capsys) -> None:
    _write(tmp_path / "a.sse")
    assert main(["inspect", str(tmp_path / "a.sse")]) == 0
    out = capsys.readouterr().out
    assert "a  [openai-chat, model streamcalls-lab]" in out
    assert 'call call_1 get_weather: 17 chars, complete: {"city": "Paris"}' in out


def test_json_gives_one_object_per_turn(tmp_path: Path, capsys) -> None:
    _write(tmp_path / "a.sse")
    _write(tmp_path / "b.sse", quirks=frozenset({"stop_reason_mismatch"}))
    assert main(["inspect", "--json", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["turn"] for r in rows] == ["a", "b"]
    assert rows[1]["anomalies"][0]["anomaly"] == "stop_reason_mismatch"
    assert set(rows[0]) == {"turn", "provider", "host", "model", "calls", "problems", "errors",
                            "anomalies"}


def test_a_turn_with_problems_exits_one(tmp_path: Path, capsys) -> None:
    _write(tmp_path / "a.sse")
    (tmp_path / "b.sse").write_bytes(b"data: {not json\n\n")
    assert main(["inspect", str(tmp_path)]) == 1
    assert "problem at byte 0: invalid JSON" in capsys.readouterr().out


def test_a_path_that_names_nothing_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["inspect", str(tmp_path / "nothing.sse")]) == 2
    assert main(["inspect"]) == 2
    assert "error" in capsys.readouterr().err


def test_captured_text_never_reaches_the_terminal_as_is(tmp_path: Path, capsys) -> None:
    _write(tmp_path / "x.sse", segments=(Call(HOSTILE, "call_1", (json.dumps(
        {"note": HOSTILE}),)),))
    main(["inspect", str(tmp_path / "x.sse")])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b[2J" in out and "\\u202e" in out


def test_quirks_lists_every_quirk_with_its_threads(capsys) -> None:
    assert main(["inspect", "--quirks"]) == 0
    out = capsys.readouterr().out
    assert all(f"{name}: " in out for name in QUIRKS)


def test_the_bundled_data_inspects_clean() -> None:
    reports = report(DATA)
    assert reports and not any(r.problems for r in reports)
    assert {r.provider for r in reports} == {"anthropic-messages", "openai-chat",
                                             "openai-responses"}


# -- who served a turn ------------------------------------------------------------------------
def test_the_model_comes_from_the_stream_when_nothing_else_says(tmp_path: Path) -> None:
    _write(tmp_path / "a.sse", model="qwen3-max")
    row = served_by(tmp_path / "a.sse").iloc[0]
    assert (row.model, row.said_by) == ("qwen3-max", "stream") and pd.isna(row.host)


@pytest.mark.parametrize(("fmt", "streamed", "model", "said_by"), [
    ("anthropic-messages", "", "qwen/qwen3-max", "provenance"),
    # a gateway may answer an alias with a dated model, or fall back to another: the model
    # the stream names wins over the one asked for
    ("openai-chat", "qwen/qwen3-max-2026-01", "qwen/qwen3-max-2026-01", "stream, provenance"),
], ids=["the model asked for", "the model the stream names"])
def test_the_provenance_sidecar_says_host_and_model(tmp_path: Path, fmt: str, streamed: str,
                                                    model: str, said_by: str) -> None:
    _write(tmp_path / "a.sse", fmt=fmt, model=streamed)
    (tmp_path / "a.sse.meta.json").write_text(json.dumps(
        {"url": "https://openrouter.ai/api/v1/chat/completions", "model": "qwen/qwen3-max"}))
    row = served_by(tmp_path / "a.sse").iloc[0]
    assert (row.host, row.model, row.said_by) == ("openrouter.ai", model, said_by)


def test_a_folder_index_names_the_host(tmp_path: Path) -> None:
    (tmp_path / "openai-chat").mkdir()
    _write(tmp_path / "openai-chat" / "a.sse")
    (tmp_path / "INDEX.tsv").write_text("file\tnotes\nopenai-chat/a.sse\thost=api.groq.com | "
                                        "model=llama-3.3 | longest args 3 chars\n")
    row = served_by(tmp_path).iloc[0]
    assert (row.host, row.model) == ("api.groq.com", "streamcalls-lab")
    assert row.said_by == "stream, index"


@pytest.mark.captures
def test_the_shared_captures_inspect_without_a_crash(captures) -> None:
    reports = report(captures / "openai-chat")
    assert len(reports) > 200 and all(r.model for r in reports[:20])


# -- inspect --summary and its filters ---------------------------------------------------------
def _folder(tmp_path: Path) -> Path:
    """Three turns: two served by one host (one showing a quirk), one cut short."""
    (tmp_path / "c").mkdir()
    _write(tmp_path / "c" / "ok.sse")
    _write(tmp_path / "c" / "blank.sse", quirks=frozenset({"blank_identity"}))
    cut = turns.turn_bytes("openai-chat", Script((Call("f", "call_9", ('{"a": ', "1}")),),
                                                 cut=True))
    (tmp_path / "c" / "cut.sse").write_bytes(cut[:-3])
    (tmp_path / "c" / "INDEX.tsv").write_text(
        "file\tnotes\nok.sse\thost=api.groq.com\nblank.sse\thost=api.groq.com\n"
        "cut.sse\thost=evil\x1b[2Jhost | model=m\u202ex\n")
    return tmp_path / "c"


def test_summary_counts_turns_calls_and_findings_per_server(tmp_path: Path, capsys) -> None:
    assert main(["inspect", "--summary", "--json", str(_folder(tmp_path))]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["totals"]["turns"] == 3 and got["totals"]["with_problems"] == 1
    assert got["totals"]["calls"] == 3 and got["totals"]["not_complete"] == 1
    hosts = {r["name"]: r["turns"] for r in got["host"]}
    assert hosts["api.groq.com"] == 2
    assert sum(r["turns"] for r in got["provider"]) == 3
    assert [a["name"] for a in got["anomalies"]] == ["blank_identity"]


def test_summary_text_is_inert(tmp_path: Path, capsys) -> None:
    main(["inspect", "--summary", str(_folder(tmp_path))])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "evil\\x1b[2Jhost" in out and "3 turns, 3 calls (1 not complete" in out


def test_filters_keep_only_the_turns_asked_for(tmp_path: Path, capsys) -> None:
    folder = str(_folder(tmp_path))
    assert main(["inspect", "--anomaly", "blank_identity", folder]) == 0
    out = capsys.readouterr().out
    assert out.startswith("blank  [") and "\nok  [" not in out and "cut  [" not in out
    assert main(["inspect", "--problems", folder]) == 1
    assert capsys.readouterr().out.startswith("cut  [")
    assert main(["inspect", "--host", "API.GROQ.COM", "--json", folder]) == 0
    assert sorted(json.loads(line)["turn"] for line in
                  capsys.readouterr().out.splitlines()) == ["blank", "ok"]


def test_an_unknown_anomaly_is_a_usage_error_naming_the_known(tmp_path: Path, capsys) -> None:
    assert main(["inspect", "--anomaly", "nope", str(_folder(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "no anomaly 'nope'" in err and "blank_identity" in err


def test_a_folder_read_in_batches_reports_as_one_read(tmp_path: Path, capsys,
                                                       monkeypatch) -> None:
    from streamcalls_lab import cli

    folder = str(_folder(tmp_path))
    main(["inspect", "--json", folder])
    whole = capsys.readouterr().out
    monkeypatch.setattr(cli, "INSPECT_BATCH", 1)
    main(["inspect", "--json", folder])
    assert capsys.readouterr().out == whole
