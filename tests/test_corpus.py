"""origin: what a folder of captures is, and what in it the notebooks cannot show."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import streamcalls_lab as scl
from streamcalls_lab import corpus as origin

from .conftest import DATA
from .support import turns


def test_the_bundled_fixtures_are_named_generated_with_their_calibration_and_timing_model(
) -> None:
    text = origin.describe(DATA)
    assert origin.generated(DATA)
    assert "generated, not recorded" in text and "Timing is an assumption" in text
    assert "218 anthropic-messages" in text  # from calibration.json, not typed in


def test_a_copy_of_the_fixtures_is_still_the_fixtures(tmp_path: Path) -> None:
    shutil.copytree(DATA / "openai-chat", tmp_path / "openai-chat")
    assert origin.generated(tmp_path)


def test_one_changed_byte_makes_a_folder_not_the_fixtures(tmp_path: Path) -> None:
    shutil.copytree(DATA / "openai-chat", tmp_path / "openai-chat")
    path = tmp_path / "openai-chat" / "short-call.sse"
    path.write_bytes(path.read_bytes().replace(b"search", b"seArch", 1))
    assert not origin.generated(tmp_path)
    assert "is not the bundled fixtures" in origin.describe(tmp_path)


def test_a_folder_of_other_captures_is_not_called_generated(tmp_path: Path) -> None:
    (tmp_path / "mine.sse").write_bytes(turns.anthropic(["Hi"]))
    assert not origin.generated(tmp_path)
    assert "None has a `.timing.tsv` sidecar" in origin.describe(tmp_path)


def test_an_empty_folder_is_not_the_fixtures(tmp_path: Path) -> None:
    assert not origin.generated(tmp_path)


def test_files_the_loader_passes_over_are_listed_by_kind_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("{}\n")
    (tmp_path / "b.jsonl").write_text("{}\n")
    (tmp_path / "notes.bin").write_bytes(b"\x00")
    (tmp_path / "t.sse").write_bytes(turns.anthropic(["Hi"]))
    (tmp_path / "t.sse.timing.tsv").write_text("t\tbytes\n")
    table = origin.unread(tmp_path).set_index("what")
    assert table.loc[".jsonl files", "files"] == 2
    assert "import" in table.loc[".jsonl files", "reason"]
    assert table.loc[".bin files", "example"] == "notes.bin"
    assert len(table) == 2  # the capture and its sidecar are read


def test_unreadable_and_partly_read_captures_are_listed_with_their_problem(tmp_path: Path) -> None:
    (tmp_path / "junk.sse").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "cut.sse").write_bytes(turns.anthropic(["Hi"])[:-7])
    table = origin.unread(tmp_path, scl.load(tmp_path, strict=False)).set_index("example")
    assert table.loc["junk", "what"] == "unreadable capture"
    assert table.loc["cut", "what"] == "capture read in part"
    assert table["reason"].str.len().min() > 0


def test_a_turn_is_traced_back_to_its_file() -> None:
    path = origin.file_of(DATA, "openai-chat/short-call")
    assert path == DATA / "openai-chat" / "short-call.sse"
    assert origin.file_of(DATA, "openai-chat/no-such-turn") is None


def test_the_report_escapes_the_folder_name_and_lists_what_was_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "<img src=x onerror=alert(1)>"
    folder.mkdir()
    (folder / "a.jsonl").write_text("{}\n")
    markup = str(origin.report(folder))
    assert "<img" not in markup and "&lt;img src=x" in markup
    assert ".jsonl files" in markup


def test_the_report_says_when_every_file_was_read() -> None:
    assert "Every file here was read." in str(origin.report(DATA, scl.load(DATA, strict=False)))


def test_one_bundled_capture_is_named_generated_and_a_changed_copy_is_not(tmp_path: Path) -> None:
    path = DATA / "anthropic-messages" / "short-call.sse"
    assert origin.generated(path)
    copy = tmp_path / "short-call.sse"
    copy.write_bytes(path.read_bytes() + b"\n")
    assert not origin.generated(copy)


def test_the_origin_note_sets_its_backticked_names_as_code_not_as_backticks() -> None:
    note = str(origin.report(DATA, scl.load(DATA, strict=False))).split("</p>", 1)[0]
    assert "`" not in note and "<code>scripts/make_data.py</code>" in note
# -- the data folder a notebook reads --------------------------------------------------------
def test_the_data_folder_is_the_default_when_the_variable_is_unset(monkeypatch) -> None:
    monkeypatch.delenv("STREAMCALLS_DATA", raising=False)
    assert origin.data_folder("../data") == Path("../data")


def test_an_empty_or_blank_data_variable_means_the_default(monkeypatch) -> None:
    for value in ("", "   "):
        monkeypatch.setenv("STREAMCALLS_DATA", value)
        assert origin.data_folder("../data") == Path("../data")


def test_the_data_variable_names_the_folder(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STREAMCALLS_DATA", str(tmp_path))
    assert origin.data_folder("../data") == tmp_path


def test_a_data_variable_naming_nothing_says_which_variable(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STREAMCALLS_CAPTURES", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match=r"STREAMCALLS_CAPTURES=.*names no file"):
        origin.data_folder("../data", "STREAMCALLS_CAPTURES")


# -- a sample spread across what served the captures -----------------------------------------
def _served_folder(root: Path) -> Path:
    """Six Anthropic captures named first, one Chat and one Responses capture after them."""
    for n in range(6):
        path = root / "anthropic-messages" / f"a{n}.sse"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(turns.anthropic([], [("lookup", ['{"id": ', f'"{n}"}}'])]))
    (root / "zz-chat.sse").write_bytes(turns.chat([(0, "call_1", "lookup", ['{"id": 1}'])]))
    (root / "zz-responses.sse").write_bytes(turns.responses(['{"id": ', '2}']))
    return root


def test_a_sample_takes_every_format_before_any_twice(tmp_path: Path) -> None:
    picked = origin.sample(_served_folder(tmp_path), 3)
    assert sorted(picked["provider"]) == ["anthropic-messages", "openai-chat",
                                          "openai-responses"]
    assert picked.attrs["captures"] == 8 and picked.attrs["strata"] == 3


def test_a_sample_is_the_same_for_the_same_seed(tmp_path: Path) -> None:
    folder = _served_folder(tmp_path)
    assert origin.sample(folder, 4, seed=1)["turn"].tolist() == (
        origin.sample(folder, 4, seed=1)["turn"].tolist())


def test_no_sample_size_picks_every_capture(tmp_path: Path) -> None:
    assert len(origin.sample(_served_folder(tmp_path), None)) == 8


def test_a_sample_leaves_out_captures_over_its_size_limit_and_counts_them(tmp_path: Path) -> None:
    folder = _served_folder(tmp_path)
    big = folder / "anthropic-messages" / "a0.sse"
    big.write_bytes(big.read_bytes() + b": padding\n" * 2000)
    picked = origin.sample(folder, 7, max_bytes=10_000)
    assert "anthropic-messages/a0" not in set(picked["turn"])
    assert picked.attrs["too_large"] == 1


def test_an_optional_data_variable_naming_nothing_is_that_path(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STREAMCALLS_CAPTURES", str(tmp_path / "nowhere"))
    assert origin.data_folder("x", "STREAMCALLS_CAPTURES", optional=True) == tmp_path / "nowhere"
