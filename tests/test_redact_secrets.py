"""redact searches what it keeps (model, object keys, event names...) for the credentials the
user names, in every form :mod:`streamcalls_lab.echoes` knows (issue #34): a contiguous
spelling is replaced, and a file where one still shows (split across frames) is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamcalls_lab import echoes
from streamcalls_lab.redact import Refused, redact_paths

KEY = "sk-ant-Zq9KEY12345678"


def _capture(*models: str) -> bytes:
    return b"".join(
        b'event: message_start\ndata: {"type":"message_start","message":{"model":"%s",'
        b'"id":"msg_%d"}}\n\n' % (m.encode(), i) for i, m in enumerate(models))


@pytest.mark.parametrize("model", [
    KEY,
    "".join(f"\\u{ord(c):04x}" for c in KEY),
    "".join(f"\\u{ord(c):04X}" if i % 3 else c for i, c in enumerate(KEY)),
], ids=["plain", "escaped", "mixed"])
def test_a_known_key_kept_by_redaction_is_replaced(model: str, tmp_path: Path) -> None:
    src = tmp_path / "turn.sse"
    src.write_bytes(_capture(model))
    (plain,) = redact_paths([src], tmp_path / "plain", salt="s")
    assert echoes.find(plain.read_bytes(), [KEY]) is not None  # what redaction alone keeps
    (out,) = redact_paths([src], tmp_path / "out", salt="s", secrets=[KEY])
    assert echoes.find(out.read_bytes(), [KEY]) is None
    assert len(out.read_bytes()) == len(src.read_bytes())


def test_a_known_key_split_across_frames_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "turn.sse"
    src.write_bytes(_capture(KEY[:10], KEY[10:]))
    refused: list[Refused] = []
    assert redact_paths([src], tmp_path / "out", secrets=[KEY], refused=refused) == []
    (why,) = refused
    assert "secret remains" in str(why) and KEY not in str(why)
    assert not (tmp_path / "out" / "turn.sse").exists()


def test_the_cli_takes_the_key_from_the_environment(tmp_path: Path) -> None:
    src = tmp_path / "turn.sse"
    src.write_bytes(_capture(KEY))
    done = subprocess.run(
        [sys.executable, "-m", "streamcalls_lab", "redact", str(src), "--out",
         str(tmp_path / "out"), "--secret-env", "MY_KEY"],
        env={**os.environ, "MY_KEY": KEY}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert echoes.find((tmp_path / "out" / "turn.sse").read_bytes(), [KEY]) is None
    assert KEY not in done.stdout + done.stderr
