"""cli: every subcommand runs from ``python -m streamcalls_lab``; adding one is one function."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from streamcalls_lab import cli, load

from .conftest import REPO
from .support import turns

BODY = turns.anthropic(text=["Hello there"], calls=[("lookup", ['{"q": "Paris"}'])])


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamcalls_lab", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=timeout)


def test_help_lists_every_subcommand() -> None:
    done = _run("--help")
    assert done.returncode == 0
    for name in ("serve", "record", "import", "redact", "replay"):
        assert f"    {name} " in done.stdout


def test_a_subcommand_is_one_decorated_function(capsys: pytest.CaptureFixture[str]) -> None:
    @cli.command(cli.arg("--n", type=int, default=1))
    def cmd_echo_twice(ns: argparse.Namespace) -> int:
        """Print n twice."""
        print(ns.n * 2)
        return 0

    try:
        assert cli.main(["echo-twice", "--n", "21"]) == 0
        assert capsys.readouterr().out == "42\n"
    finally:
        del cli.COMMANDS["echo-twice"]


def test_import_writes_captures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "log.jsonl"
    src.write_text('{"type":"message_stop"}\n')
    assert cli.main(["import", str(src), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "log.sse").exists()
    assert "wrote 1 capture to" in capsys.readouterr().out


def test_redact_writes_same_size_copies(tmp_path: Path) -> None:
    (tmp_path / "a.sse").write_bytes(BODY)
    assert cli.main(["redact", str(tmp_path / "a.sse"), "--out", str(tmp_path / "out"),
                     "--salt", "s"]) == 0
    redacted = (tmp_path / "out" / "a.sse").read_bytes()
    assert len(redacted) == len(BODY) and b"Paris" not in redacted


def test_replay_writes_the_capture_to_stdout(tmp_path: Path) -> None:
    (tmp_path / "a.sse").write_bytes(BODY)
    done = subprocess.run([sys.executable, "-m", "streamcalls_lab", "replay",
                           str(tmp_path / "a.sse"), "--speed", "inf"],
                          capture_output=True, cwd=REPO, timeout=60)
    assert done.returncode == 0
    assert done.stdout == BODY


def test_errors_are_one_line_with_exit_code_1(tmp_path: Path) -> None:
    done = _run("redact", str(tmp_path / "missing.sse"), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "error:" in done.stderr


def test_a_speed_of_zero_is_a_usage_error(tmp_path: Path) -> None:
    done = _run("replay", "x.sse", "--speed", "0")
    assert done.returncode == 2
    assert "speed must be > 0" in done.stderr


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    capture = tmp_path / "a.sse"
    capture.write_bytes(BODY)
    proc = subprocess.Popen([sys.executable, "-m", "streamcalls_lab", "serve", str(capture),
                             "--port", "0", "--speed", "inf"],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # "serving a at http://127.0.0.1:PORT ..."
        url = next(w for w in first.split() if w.startswith("http://127.0.0.1:"))
        yield url, proc
    finally:
        proc.terminate()  # only the process this fixture started
        proc.wait(timeout=10)


def test_serve_prints_its_url_and_streams_the_capture(
    served: tuple[str, subprocess.Popen[str]],
) -> None:
    url, _ = served
    with httpx2.Client(timeout=20) as client:
        resp = client.post(url + "/v1/messages", content=json.dumps({"stream": True}))
    assert resp.content == BODY
    assert load(resp.content).kind.tolist() == load(BODY).kind.tolist()
