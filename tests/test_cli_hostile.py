"""coverage and replay on files that are not captures: the file named, the reason given,
a non-zero exit, and nothing binary dumped onto the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamcalls_lab import cli

from .support import turns

NOT_CAPTURES = {
    "image.sse": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "empty.sse": b"",
    "doc.sse": b'{"log": {"entries": []}}\n',
    "lines.sse": b'{"level": "info", "msg": "started"}\n{"level": "info", "msg": "done"}\n',
}


@pytest.fixture(params=sorted(NOT_CAPTURES))
def not_capture(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / request.param
    path.write_bytes(NOT_CAPTURES[request.param])
    return path


def test_coverage_names_a_file_that_is_not_a_capture_and_fails(
    not_capture: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["coverage", str(not_capture)]) == 1
    err = capsys.readouterr().err
    assert not_capture.stem in err and "not a capture" in err


def test_coverage_still_reports_the_good_captures_beside_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "good.sse").write_bytes(turns.anthropic(text=["Hi"]))
    (tmp_path / "image.sse").write_bytes(NOT_CAPTURES["image.sse"])
    assert cli.main(["coverage", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert "anthropic-messages" in out.out and "image" in out.err


def test_replay_refuses_a_file_that_is_not_a_capture_and_writes_nothing(
    not_capture: Path, capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    assert cli.main(["replay", str(not_capture), "--speed", "inf"]) == 1
    out = capsysbinary.readouterr()
    assert out.out == b"" and b"not a capture" in out.err
    assert not_capture.name.encode() in out.err


@pytest.mark.parametrize("command", ["diff", "conform"])
def test_an_error_quoting_a_capture_reaches_the_terminal_inert(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # a provider error of no known format is quoted in the refusal: escapes, bidi and NUL
    hostile = tmp_path / "esc.sse"
    hostile.write_bytes(b'event: error\ndata: {"type": "error", "error": {"message": '
                        b'"\\u001b]0;PWN\\u0007\\u001b[31mRED\\u202e\\u0000"}}\n\n')
    good = tmp_path / "good.sse"
    good.write_bytes(turns.anthropic(text=["Hi"]))
    args = [str(good), str(hostile)] if command == "diff" else [
        "--streamed", str(hostile), "--whole", str(good)]
    assert cli.main([command, *args]) == 2
    err = capsys.readouterr().err
    assert "RED" in err
    assert not any(c in err for c in "\x1b\x07\u202e\x00")


ESCAPES = "\x1b]0;PWN\x07\x1b[31mRED\u202e"


@pytest.mark.parametrize("command", ["inspect", "coverage", "replay"])
def test_a_file_name_that_holds_escapes_reaches_the_terminal_inert(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # a file that is not a capture, and one that is not there: each named in an error
    bad = tmp_path / f"odd{ESCAPES}.sse"
    bad.write_bytes(NOT_CAPTURES["image.sse"])
    for path in (bad, tmp_path / f"gone{ESCAPES}.sse"):
        assert cli.main([command, str(path)]) != 0
        said = "".join(capsys.readouterr())  # stdout and stderr
        assert "RED" in said and not any(c in said for c in "\x1b\x07\u202e"), said


def test_a_torture_report_shows_a_clients_escapes_as_escapes() -> None:
    import pandas as pd

    from streamcalls_lab.torture import markdown

    text = markdown(pd.DataFrame({"class": ["trim"], "got": [f"x{ESCAPES}"],
                                  "detail": [f"y{ESCAPES}"]}))
    assert "RED" in text and not any(c in text for c in "\x1b\x07\u202e")
