"""timing: the sidecar format, and how load() picks it up through sources."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from streamcalls_lab import CaptureError, load, timing

from .support import turns

BODY = turns.anthropic(text=["Hi", " there"], calls=[("lookup", ['{"q"', ': "x"}'])])


def _capture(tmp_path: Path, body: bytes = BODY) -> Path:
    path = tmp_path / "turn.sse"
    path.write_bytes(body)
    return path


def test_write_then_read_gives_the_reads_back(tmp_path: Path) -> None:
    path = _capture(tmp_path)
    reads = [(0.0, 10), (0.25, 100), (1.5, len(BODY) - 110)]
    timing.write(path, reads)
    assert timing.read(path) == reads


def test_sidecar_sits_beside_the_capture_with_the_documented_name(tmp_path: Path) -> None:
    path = _capture(tmp_path)
    written = timing.write(path, [(0.0, len(BODY))])
    assert written == tmp_path / "turn.sse.timing.tsv"
    assert written.read_text().splitlines()[0] == "t\tbytes"


def test_no_sidecar_reads_as_none(tmp_path: Path) -> None:
    assert timing.read(_capture(tmp_path)) is None


BAD_SIDECARS = {  # a sidecar read refuses: (its text, what the error says)
    "a wrong header": ("time\tsize\n0\t10\n", "must start with"),
    "a malformed row, with its line number": ("t\tbytes\n0.0\t10\nsoon\t5\n", "line 3"),
    "time running backwards": (f"t\tbytes\n0.5\t10\n0.2\t{len(BODY) - 10}\n", "non-decreasing"),
}


@pytest.mark.parametrize(("text", "reason"), BAD_SIDECARS.values(), ids=BAD_SIDECARS)
def test_a_bad_sidecar_is_refused(tmp_path: Path, text: str, reason: str) -> None:
    path = _capture(tmp_path)
    timing.sidecar(path).write_text(text)
    with pytest.raises(CaptureError, match=reason):
        timing.read(path)


def test_reads_that_do_not_cover_the_capture_are_refused_by_load(tmp_path: Path) -> None:
    path = _capture(tmp_path)
    timing.write(path, [(0.0, 10)])
    with pytest.raises(CaptureError, match="covers 10 bytes"):
        load(path)


def test_chunked_cuts_the_body_back_into_the_recorded_reads() -> None:
    chunks = list(timing.chunked(b"abcdef", [(0.0, 2), (0.1, 0), (0.3, 4)], "x"))
    assert chunks == [(0.0, b"ab"), (0.1, b""), (0.3, b"cdef")]


def test_load_fills_t_with_the_time_of_the_read_that_completed_each_frame(
    tmp_path: Path,
) -> None:
    path = _capture(tmp_path)
    second_frame_end = BODY.index(b"\n\n", BODY.index(b"\n\n") + 2) + 2
    # Read 1 ends mid-way through frame 2, read 2 completes it, read 3 brings the rest.
    reads = [(0.0, second_frame_end - 5), (0.4, 5), (0.9, len(BODY) - second_frame_end)]
    timing.write(path, reads)
    t = load(path)["t"].tolist()
    assert t[0] == 0.0
    assert t[1] == 0.4
    assert all(x == 0.9 for x in t[2:])


def test_load_without_a_sidecar_has_no_times(tmp_path: Path) -> None:
    assert all(math.isnan(x) for x in load(_capture(tmp_path))["t"])


def test_timing_changes_t_and_nothing_else(tmp_path: Path) -> None:
    plain = load(BODY, name="turn")
    timed_path = _capture(tmp_path)
    timing.write(timed_path, [(0.01 * i, 1) for i in range(len(BODY))])  # one byte per read
    timed = load(timed_path, name="turn")
    assert timed.drop(columns="t").equals(plain.drop(columns="t"))
    assert timed["t"].notna().all()


def test_a_directory_finds_each_sidecar_from_its_one_listing(tmp_path: Path) -> None:
    """A directory is listed once and a capture without a sidecar costs no stat: the turns
    and times must still be those of loading each file on its own, nested folders too."""
    for rel in ("a.sse", "sub/b.sse", "sub/deeper/c.sse", "sub-x/d.sse"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(BODY)
    timing.write(tmp_path / "sub/b.sse", [(0.5, len(BODY))])
    timing.write(tmp_path / "sub-x/d.sse", [(0.25, 10), (0.75, len(BODY) - 10)])
    whole = load(tmp_path)
    assert list(whole["turn"].unique()) == ["a", "sub/b", "sub/deeper/c", "sub-x/d"]
    for turn, rows in whole.groupby("turn", sort=False):
        alone = load(tmp_path / f"{turn}.sse", name=turn)
        assert rows.reset_index(drop=True).equals(alone)
    assert whole.loc[whole["turn"] == "sub/b", "t"].eq(0.5).all()
