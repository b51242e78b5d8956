"""``conform --whole`` on JSON nested past the parser's depth (issue #34): a usage error
(exit 2, one line), as every other unreadable whole answer, never a RecursionError
traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..conftest import REPO
from ..support import turns


def test_a_whole_answer_nested_too_deep_is_a_usage_error(tmp_path: Path) -> None:
    streamed = tmp_path / "s.sse"
    streamed.write_bytes(turns.anthropic(text=["Hi"]))
    whole = tmp_path / "w.json"
    depth = 5_000
    whole.write_text('{"content": ' + "[" * depth + "]" * depth + "}")
    done = subprocess.run([sys.executable, "-m", "streamcalls_lab", "conform", "--streamed",
                           str(streamed), "--whole", str(whole)], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env={"PYTHONPATH": str(REPO),
                                                                 "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "deeper" in done.stderr
