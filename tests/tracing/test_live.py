"""The live check against the real instrumentations, on loopback: each traced program runs
once (loop mode) over a handful of cases, under a socket guard that refuses and records any
connection off 127.0.0.1. What each keeps is docs/tracers.md's table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from streamcalls_lab.tracing.live import check_tracer

REPO = Path(__file__).resolve().parents[2]
TRACERS = REPO / "clients" / "tracers"
GUARD = REPO / "tests" / "support"  # its sitecustomize.py is the socket guard
FAMILIES = ["spaces", "escapes", "two_calls_one_tool", "interleaved"]
CASES = {  # program: (the module it needs, the format it speaks)
    "openai_v2": ("opentelemetry.instrumentation.openai_v2", "openai-chat"),
    "openinference_openai": ("openinference.instrumentation.openai", "openai-chat"),
    "openinference_anthropic": ("openinference.instrumentation.anthropic",
                                "anthropic-messages"),
    "langfuse_openai": ("langfuse.openai", "openai-chat"),
    "logfire_openai": ("logfire", "openai-chat"),
}


@pytest.mark.parametrize("program", sorted(CASES))
def test_tracer_keeps_every_call(tmp_path, program):
    module, fmt = CASES[program]
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"{module} is not installed (the tracers extra)")
    log = tmp_path / "guard.log"
    log.touch()
    cmd = ["env", f"PYTHONPATH={GUARD}", f"STREAMCALLS_GUARD_LOG={log}",
           "LANGFUSE_TELEMETRY_ENABLED=false", "LOGFIRE_SEND_TO_LOGFIRE=false",
           "OTEL_SDK_DISABLED=false", sys.executable, str(TRACERS / f"{program}.py")]
    report = check_tracer(cmd, (fmt,), families=FAMILIES, timeout=60)
    assert report.attrs["not_started"] is None, report.attrs["not_started"]
    calls = report.attrs["calls"]
    assert len(calls) == 6 and calls["got"].str.len().all()
    assert set(calls["verdict"]) <= {"ok", "reserialised"}, calls[["family", "verdict", "note"]]
    assert not report.attrs["refusals"], report.attrs["refusals"]
    assert log.read_text() == "", f"{program} tried to leave loopback: {log.read_text()}"


def test_a_broken_tracer_is_found():
    """The harness can fail: a hand-written tracer keeping each call's first fragment only
    is judged ``empty``: OpenAI's announcing chunk carries ``arguments: ""``, so it records
    exactly openinference#3142's symptom, and the report gives the fix."""
    cmd = ["env", f"PYTHONPATH={TRACERS}", sys.executable, str(TRACERS / "first_fragment.py")]
    report = check_tracer(cmd, ("openai-chat",), families=["spaces", "two_calls_one_tool"],
                          timeout=60)
    assert report.attrs["not_started"] is None, report.attrs["not_started"]
    assert report["class"].tolist() == ["empty"] and report["failures"].iloc[0] == 3
    assert "fragment" in report["summary"].iloc[0]


def test_the_trace_torture_command_reports_and_exits_as_torture_does(tmp_path, capsys):
    """``python -m streamcalls_lab trace-torture``: one command, one report, in torture's
    style; 1 when a call was lost, 2 on a usage error or a program that cannot start."""
    from streamcalls_lab.cli import main

    program = f"env PYTHONPATH={TRACERS} {sys.executable} {TRACERS / 'first_fragment.py'}"
    out = tmp_path / "report.csv"
    assert main(["trace-torture", "--program", program, "--family", "spaces",
                 "--report", str(out)]) == 1
    text = capsys.readouterr().out
    assert "empty" in text and "cases, " in text and " failed, " in text
    assert "empty" in out.read_text("utf-8")
    assert main(["trace-torture", "--program", program, "--format", "nope"]) == 2
    assert "usage error" in capsys.readouterr().err
    gone = f"{sys.executable} -c 'import sys; sys.exit(\"no such tracer\")'"
    assert main(["trace-torture", "--program", gone, "--family", "spaces"]) == 2
    assert "did not start" in capsys.readouterr().out
