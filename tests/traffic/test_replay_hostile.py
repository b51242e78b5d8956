"""replay and serve on hostile captures (issue #22): a capture's escape sequences, controls
and bidi overrides never reach a terminal raw, and a read time no clock can sleep out
(1e300, inf, NaN, past a day) is refused naming the file, never an OverflowError."""

from __future__ import annotations

import math
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from streamcalls_lab import CaptureError, cli, timing
from streamcalls_lab.display import InertStream
from streamcalls_lab.traffic.serve import SSEServer

from ..conftest import REPO
from ..support import turns

BODY = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"q"', ': "x"}'])])
ACTING = "\x1b]0;owned\x07 \x1b[2J \u202egnp.exe \x9b31m \r over"
"""An OSC title, a screen clear, a bidi override, a C1 CSI and a lone CR."""


def _hostile(tmp_path: Path) -> Path:
    path = tmp_path / "turn.sse"
    path.write_bytes(turns.anthropic(text=["Hi"]) + b"event: ping\ndata: "
                     + ACTING.encode("utf-8") + b"\n\ndata: \xff\n\n")
    return path


def _replay_to(tmp_path: Path, terminal: bool) -> bytes:
    """What ``replay`` writes to a terminal (a pty) or to a pipe."""
    cmd = [sys.executable, "-m", "streamcalls_lab", "replay", str(_hostile(tmp_path)),
           "--speed", "inf"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if not terminal:
        return subprocess.run(cmd, capture_output=True, env=env, timeout=60, check=True).stdout
    main, sub = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=sub, stderr=subprocess.DEVNULL, env=env)
    os.close(sub)
    out = b""
    try:
        while chunk := os.read(main, 65536):
            out += chunk
    except OSError:  # the pty closes with the process
        pass
    finally:
        os.close(main)
    assert proc.wait(60) == 0
    return out


def test_replay_to_a_terminal_writes_no_escape_or_control_raw(tmp_path: Path) -> None:
    shown = _replay_to(tmp_path, terminal=True).replace(b"\r\n", b"\n")  # the pty's own CR
    text = shown.decode("utf-8")
    assert not any(c in text for c in "\x1b\x07\x9b\u202e\r")
    assert "\\x1b]0;owned\\x07" in text and "\\u202egnp.exe" in text
    assert "\\xff" in text  # a byte that is not UTF-8, shown


def test_replay_to_a_pipe_writes_the_capture_bytes_exactly(tmp_path: Path) -> None:
    assert _replay_to(tmp_path, terminal=False) == _hostile(tmp_path).read_bytes()


def test_the_inert_stream_shows_a_character_split_between_reads_whole() -> None:
    data = "caf\u00e9 \u202e\r\n".encode()
    shown = InertStream()
    out = "".join(shown.feed(data[i:i + 1]) for i in range(len(data))) + shown.feed(b"", True)
    assert out == "caf\u00e9 \\u202e\r\n"


@pytest.mark.parametrize("t", ["1e300", "inf", "nan", "-1", "90000"])
def test_a_read_time_no_clock_can_sleep_out_is_refused_naming_the_sidecar(
    t: str, tmp_path: Path,
) -> None:
    path = tmp_path / "turn.sse"
    path.write_bytes(BODY)
    timing.sidecar(path).write_text(f"t\tbytes\n0\t10\n{t}\t{len(BODY) - 10}\n")
    with pytest.raises(CaptureError, match=r"turn\.sse\.timing\.tsv.*line 3"):
        timing.read(path)


@pytest.mark.parametrize("command", ["replay", "serve"])
def test_replay_and_serve_say_which_file_holds_a_time_of_1e300(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "turn.sse"
    path.write_bytes(BODY)
    timing.sidecar(path).write_text(f"t\tbytes\n0\t10\n1e300\t{len(BODY) - 10}\n")
    assert cli.main([command, str(path)]) == 1
    err = capsys.readouterr().err
    assert "turn.sse" in err and "Traceback" not in err


@pytest.mark.parametrize("t", [1e300, math.inf, math.nan])
def test_in_memory_reads_at_a_time_no_clock_can_sleep_out_are_refused(t: float) -> None:
    from streamcalls_lab.traffic.replay import reads

    with pytest.raises(CaptureError, match="read 2"):
        reads([(0.0, b"data: 1\n\n"), (t, b"data: 2\n\n")])


def test_a_speed_that_puts_a_read_past_a_day_is_refused_before_serving() -> None:
    with pytest.raises(ValueError, match="speed"):
        SSEServer([(0.0, b"data: 1\n\n"), (1.0, b"data: 2\n\n")], speed=1e-300)
