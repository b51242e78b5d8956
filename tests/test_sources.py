"""load() on careless folders: odd entries become error rows (lenient) or a named CaptureError
(strict), never an abort, a hang, a merge of two turns or an empty table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streamcalls_lab import CaptureError, load, provenance, timing
from streamcalls_lab.sources import resolve

from .support import turns

GOOD = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"q"', ': "x"}'])])


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "good.sse").write_bytes(GOOD)
    return tmp_path


def _bad_entries(root: Path) -> dict[str, str]:
    """One entry of every kind that is named like a capture but cannot be read as one."""
    (root / "dangling.sse").symlink_to(root / "missing-target.sse")
    (root / "loop.sse").symlink_to(root / "loop.sse")
    (root / "folder.sse").mkdir()
    os.mkfifo(root / "fifo.sse")
    return {"dangling": "dangling symlink", "loop": "symlink loop", "folder": "a folder",
            "fifo": "not a regular file"}


def test_lenient_load_keeps_good_captures_and_gives_one_error_row_per_bad_entry(
    tmp_path: Path,
) -> None:
    root = _folder(tmp_path)
    bad = _bad_entries(root)
    df = load(root, strict=False)  # a FIFO must not hang it: it is never opened
    assert df[df.turn == "good"].kind.ne("error").all()
    errors = df[df.kind == "error"]
    assert sorted(errors.turn) == sorted(bad)
    for turn, reason in bad.items():
        assert reason in errors[errors.turn == turn].problem.iloc[0]


@pytest.mark.parametrize("entry", ["dangling", "loop", "folder", "fifo"])
def test_strict_load_raises_a_capture_error_naming_the_bad_entry(tmp_path: Path,
                                                                  entry: str) -> None:
    root = _folder(tmp_path)
    reason = _bad_entries(root)[entry]
    for other in {"dangling", "loop", "folder", "fifo"} - {entry}:
        path = root / f"{other}.sse"
        os.rmdir(path) if other == "folder" else path.unlink()
    with pytest.raises(CaptureError, match=rf"{entry}\.sse.*{reason}"):
        load(root)


def test_a_folder_listing_knows_its_regular_files_and_checks_every_other_entry(
    tmp_path: Path, monkeypatch
) -> None:
    """The listing stats no regular file (its type is in the listing); a symlink to a good
    capture, in the folder or below, still loads as that capture, a symlinked folder is
    listed but never entered, and a sub-folder that cannot be listed is an error row."""
    (tmp_path / "root").mkdir()
    root = _folder(tmp_path / "root")
    (tmp_path / "elsewhere.sse").write_bytes(GOOD)
    (root / "alias.sse").symlink_to(tmp_path / "elsewhere.sse")
    (root / "sub").mkdir()
    (root / "sub" / "inner.sse").write_bytes(GOOD)
    (root / "sub" / "alias.sse").symlink_to(tmp_path / "elsewhere.sse")
    (root / "linked").symlink_to(root / "sub")
    (root / "shut").mkdir()
    (root / "shut" / "hidden.sse").write_bytes(GOOD)
    bad = _bad_entries(root / "sub")
    real_scandir = os.scandir

    def scandir(path=".", *args):
        if os.fspath(path).endswith("shut"):  # as root, chmod 000 would not stop a listing
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path, *args)

    real_stat = os.stat
    stated: list[str] = []

    def stat(path, *args, **kwargs):
        stated.append(os.path.basename(os.fspath(path)))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "stat", stat)
    df = load(root, strict=False)
    assert "good.sse" not in stated and "inner.sse" not in stated  # (the listing said)
    assert stated.count("alias.sse") == 2  # a symlink: where it leads is looked up
    good = ["alias", "good", "sub/alias", "sub/inner"]
    assert sorted(set(df.turn)) == sorted([*good, *(f"sub/{b}" for b in bad), "shut"])
    for turn in good:
        assert df[df.turn == turn].kind.ne("error").all(), turn
    assert "folder cannot be listed" in df[df.turn == "shut"].problem.iloc[0]
    for turn, reason in bad.items():
        assert reason in df[df.turn == f"sub/{turn}"].problem.iloc[0]


def test_a_listed_capture_has_the_path_of_its_folder_joined_with_its_parts(
    tmp_path: Path, monkeypatch
) -> None:
    """A folder's captures keep ``path`` a Path (made only when asked for: load() never
    asks), the root's joined with their parts, however the root was written."""
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "a.sse").write_bytes(GOOD)
    (tmp_path / "root" / "sub" / "b.sse").write_bytes(GOOD)
    (tmp_path / "root" / "sub" / "c.sse").write_bytes(GOOD)
    timing.write(tmp_path / "root" / "sub" / "c.sse", [(0.0, len(GOOD))])
    monkeypatch.chdir(tmp_path)
    for given in (tmp_path / "root", "root", "./root/", "root/../root"):
        caps = resolve(given)
        assert [c.name for c in caps] == ["a", "sub/b", "sub/c"]
        root = Path(given)
        for cap, parts in zip(caps, (("a.sse",), ("sub", "b.sse"), ("sub", "c.sse")),
                              strict=True):
            assert type(cap.path) is type(root) and cap.path == root.joinpath(*parts)
            assert str(cap.path) == str(root.joinpath(*parts))
    cap = resolve("root")[0]
    cap.path = Path("elsewhere.sse")  # (still a field a caller may set)
    assert cap.path == Path("elsewhere.sse") and cap == cap
    assert load("root").turn.unique().tolist() == ["a", "sub/b", "sub/c"]


def test_a_bad_entry_named_directly_is_a_capture_error(tmp_path: Path) -> None:
    _bad_entries(tmp_path)
    for name in ("dangling.sse", "loop.sse", "fifo.sse"):
        with pytest.raises(CaptureError, match=name):
            load(tmp_path / name)


def test_an_unreadable_file_is_an_error_row_not_an_abort(tmp_path: Path, monkeypatch) -> None:
    root = _folder(tmp_path)
    (root / "secret.sse").write_bytes(GOOD)
    real_open = os.open

    def deny(path, *args, **kwargs):  # as root, chmod 000 would not stop a read
        if str(path).endswith("secret.sse"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    df = load(root, strict=False)
    assert df[df.turn == "secret"].problem.str.contains("Permission denied").all()
    assert (df.turn == "good").any()
    with pytest.raises(CaptureError, match=r"secret\.sse.*Permission denied"):
        load(root)


def test_an_entry_changed_after_it_was_listed_is_read_whole_or_named(tmp_path: Path,
                                                                     monkeypatch) -> None:
    """A capture's bytes are read with no file object (os.read up to the end): a file that
    grows while it is read is read whole, and an entry that became a folder or a FIFO is a
    CaptureError saying so, as opening it as a file said."""
    from streamcalls_lab.sources import _FileChunks

    grown = tmp_path / "grown.sse"
    grown.write_bytes(GOOD * 3000)  # (more than one read's worth beyond the size it states)
    real = os.fstat

    def smaller(fd: int) -> os.stat_result:  # the size it had before it grew
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, len(GOOD), st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "fstat", smaller)
    assert _FileChunks(grown, None).body() == GOOD * 3000
    monkeypatch.setattr(os, "fstat", real)
    real_read = os.read  # a file system whose reads come short (a network or FUSE mount)
    monkeypatch.setattr(os, "read", lambda fd, n: real_read(fd, min(n, 100)))
    assert _FileChunks(grown, None).body() == GOOD * 3000
    monkeypatch.setattr(os, "read", real_read)
    (tmp_path / "empty.sse").write_bytes(b"")
    assert _FileChunks(tmp_path / "empty.sse", None).body() == b""
    (tmp_path / "now-a-folder.sse").mkdir()
    with pytest.raises(CaptureError, match="cannot be read: Is a directory"):
        _FileChunks(tmp_path / "now-a-folder.sse", None).body()
    os.mkfifo(tmp_path / "now-a-fifo.sse")
    with pytest.raises(CaptureError, match="not a regular file: never read"):
        _FileChunks(tmp_path / "now-a-fifo.sse", None).body()


def test_a_broken_timing_sidecar_is_an_error_row_for_its_capture_only(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    (root / "timed.sse").write_bytes(GOOD)
    timing.sidecar(root / "timed.sse").write_bytes(b"t\tbytes\n\xff\xfe\n")
    df = load(root, strict=False)
    assert df[df.turn == "timed"].problem.str.contains("not UTF-8").all()
    assert df[df.turn == "good"].kind.ne("error").all()


@pytest.mark.parametrize("body, reason", [
    (b"t\tbytes\n\xff\n", "not UTF-8"),
    (b"\xef\xbb\xbf\x00\x00", "not UTF-8|must start"),
    (b"t\tbytes\n0.0\t1\t2\n", "expected 't<TAB>bytes'"),
    (b"t\tbytes\n0.0\n", "expected 't<TAB>bytes'"),
    (b"t\tbytes\nsoon\t4\n", "expected 't<TAB>bytes'"),
    (b"t\tbytes\n0.0\t-4\n", "non-negative"),
    (b"t\tbytes\n-1.0\t4\n", "non-decreasing"),
    (b"t\tbytes\nnan\t4\n", "finite"),
    (b"t\tbytes\n0.0\t4\n", "covers 4 bytes"),
])
def test_every_malformed_timing_sidecar_is_a_capture_error(tmp_path: Path, body: bytes,
                                                          reason: str) -> None:
    path = tmp_path / "turn.sse"
    path.write_bytes(GOOD)
    timing.sidecar(path).write_bytes(body)
    with pytest.raises(CaptureError, match=reason):
        load(path)


def test_glob_turns_are_named_by_relative_path_so_same_stems_never_merge(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "turn.sse").write_bytes(GOOD)
    df = load(str(tmp_path / "*" / "turn.sse"))
    assert sorted(df.turn.unique()) == ["a/turn", "b/turn"]
    assert not df.duplicated(["turn", "seq"]).any()


def test_glob_names_match_the_directory_load_names(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.sse").write_bytes(GOOD)
    (tmp_path / "y.sse").write_bytes(GOOD)
    from_glob = [c.name for c in resolve(str(tmp_path / "**" / "*.sse"))]
    assert sorted(from_glob) == sorted(c.name for c in resolve(tmp_path))


def test_a_recursive_glob_through_a_symlink_loop_loads_each_file_once(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "turn.sse").write_bytes(GOOD)
    (tmp_path / "d" / "again").symlink_to(tmp_path / "d")
    caps = resolve(str(tmp_path / "**" / "*.sse"))
    assert [c.name for c in caps] == ["d/turn"]


@pytest.mark.parametrize("pattern", ["*.sse", "**/*.eventstream", "nothing-[ab].sse"])
def test_a_glob_matching_nothing_is_an_error_not_an_empty_table(tmp_path: Path,
                                                                pattern: str) -> None:
    with pytest.raises(FileNotFoundError, match="no capture matches"):
        load(str(tmp_path / pattern))


@pytest.mark.parametrize("text", [
    GOOD.decode(),
    'data: {"type": "ping"}',
    'event: ping\ndata: {}\n\n',
    '\ufeffdata: [DONE]\r\n\r\n',
    '{"type": "message_start"}',
])
def test_capture_text_passed_as_a_path_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="capture text, not a path"):
        load(text)


def _cut(tmp_path: Path, reason: str = "IncompleteRead", body: bytes = GOOD[:-30],
         source: str = "record") -> Path:
    """A capture of ``body`` whose provenance says the recording was cut off for ``reason``."""
    path = tmp_path / "cut.sse"
    path.write_bytes(body)
    provenance.write(path, {"source": source, "cut_off": reason})
    return path


def test_a_cut_off_recording_is_an_error_row_at_the_byte_it_stopped(tmp_path: Path) -> None:
    path = _cut(tmp_path)
    df = load(path, strict=False)
    last = df.iloc[-1]
    assert last.kind == "error"
    assert last.offset == path.stat().st_size
    assert "broke off" in last.problem and "IncompleteRead" in last.problem


def test_a_cut_off_recording_at_a_frame_boundary_is_still_reported(tmp_path: Path) -> None:
    whole_frame = GOOD[: GOOD.index(b"\n\n") + 2]  # nothing torn
    path = _cut(tmp_path, "client hung up", whole_frame, source="proxy")
    with pytest.raises(CaptureError, match=rf"cut\b.*byte {path.stat().st_size}.*client hung up"):
        load(path)


def test_a_cut_off_recording_in_a_folder_is_reported_too(tmp_path: Path) -> None:
    _cut(_folder(tmp_path))
    df = load(tmp_path, strict=False)
    errors = df[df.kind == "error"]
    assert set(errors.turn) == {"cut"}
    assert errors.problem.str.contains("broke off").any()


def test_a_complete_recording_with_provenance_has_no_error_row(tmp_path: Path) -> None:
    path = tmp_path / "whole.sse"
    path.write_bytes(GOOD)
    provenance.write(path, {"source": "record", "status": 200})
    assert load(path).kind.ne("error").all()


def test_an_unparseable_provenance_sidecar_is_named(tmp_path: Path) -> None:
    path = tmp_path / "turn.sse"
    path.write_bytes(GOOD)
    provenance.sidecar(path).write_text("{not json")
    with pytest.raises(CaptureError, match=r"meta\.json.*unreadable provenance"):
        load(path)


@pytest.mark.parametrize("sidecar", [timing.sidecar, provenance.sidecar])
def test_a_sidecar_that_is_a_fifo_is_named_never_opened(tmp_path: Path, sidecar) -> None:
    root = _folder(tmp_path)
    (root / "odd.sse").write_bytes(GOOD)
    os.mkfifo(sidecar(root / "odd.sse"))
    df = load(root, strict=False)  # would block forever if the FIFO were opened
    assert df[df.turn == "odd"].problem.str.contains("not a regular file").all()
    assert df[df.turn == "good"].kind.ne("error").all()
