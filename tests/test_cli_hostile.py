"""coverage and replay on files that are not captures: the file named, the reason given,
a non-zero exit, and nothing binary dumped onto the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamcalls_lab import cli

from . import turns

NOT_CAPTURES = {
    "image.sse": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "empty.sse": b"",
    "doc.sse": b'{"log": {"entries": []}}\n',
    "lines.sse": b'{"type": "message_start"}\n{"type": "message_stop"}\n',
}


@pytest.mark.parametrize("name", sorted(NOT_CAPTURES))
def test_coverage_names_a_file_that_is_not_a_capture_and_fails(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / name
    path.write_bytes(NOT_CAPTURES[name])
    assert cli.main(["coverage", str(path)]) == 1
    err = capsys.readouterr().err
    assert name.removesuffix(".sse") in err and "not a capture" in err


def test_coverage_still_reports_the_good_captures_beside_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "good.sse").write_bytes(turns.anthropic(text=["Hi"]))
    (tmp_path / "image.sse").write_bytes(NOT_CAPTURES["image.sse"])
    assert cli.main(["coverage", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert "anthropic-messages" in out.out and "image" in out.err


@pytest.mark.parametrize("name", sorted(NOT_CAPTURES))
def test_replay_refuses_a_file_that_is_not_a_capture_and_writes_nothing(
    tmp_path: Path, name: str, capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    path = tmp_path / name
    path.write_bytes(NOT_CAPTURES[name])
    assert cli.main(["replay", str(path), "--speed", "inf"]) == 1
    out = capsysbinary.readouterr()
    assert out.out == b"" and b"not a capture" in out.err and name.encode() in out.err
