"""load(): the contract's columns, every kind of source, and bad input."""

from __future__ import annotations

import io
import json
import tracemalloc

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab.sources import resolve

from .support.sse_turns import START, TOOL, anthropic, args_delta

STOP = {"type": "content_block_stop", "index": 1}
GOOD = anthropic(START, TOOL, args_delta('{"q": '), args_delta('"caf\u00e9"}'), STOP,
                 {"type": "message_stop"})

CONTRACT_DTYPES = {
    "turn": "str", "seq": "int64", "offset": "int64", "t": "float64",
    "provider": "category", "event": "str", "kind": "category", "block": "Int64",
    "call_id": "str", "tool": "str", "fragment": "str", "chars": "Int64",
    "wire_chars": "Int64",
}


def test_contract_columns_and_dtypes() -> None:
    df = scl.load(GOOD)
    assert {c: str(df[c].dtype) for c in CONTRACT_DTYPES} == CONTRACT_DTYPES


def test_kind_categories_are_the_contracts() -> None:
    assert list(scl.load(GOOD).kind.cat.categories) == [
        "text_start", "text_delta", "call_start", "args_delta", "args_done",
        "block_stop", "turn_stop", "other", "error",
    ]


def test_kind_and_provider_are_typed_from_codes_as_from_their_values() -> None:
    """load() types ``kind`` and ``provider`` from codes (a fast-path turn's provider once,
    not a str a row): the columns are what typing each row's value gives, across turns of
    either path and formats."""
    from streamcalls_lab import _columns as columns
    from streamcalls_lab.events import KINDS
    from streamcalls_lab.loader import load_captures
    from streamcalls_lab.sources import Capture

    chat = (b'data: {"object":"chat.completion.chunk","choices":[{"index":0,'
            b'"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n')
    caps = [Capture("a", [GOOD]), Capture("b", [GOOD[:40], GOOD[40:]]),  # (chunks: decoder)
            Capture("c", [chat]), Capture("d", [b"data: {oops}\n\n"])]
    df = load_captures(caps, strict=False)
    assert set(df.provider) == {"anthropic-messages", "openai-chat", "unknown"}
    kinds, providers = list(df.kind.astype(object)), list(df.provider.astype(object))
    pd.testing.assert_extension_array_equal(df.kind.array, columns.category(kinds, KINDS))
    pd.testing.assert_extension_array_equal(df.provider.array, columns.category(providers))


def test_codes_are_places_in_the_table_and_none_for_an_odd_value() -> None:
    import pyarrow as pa

    from streamcalls_lab._columns import codes

    where = {"a": 0, "b": 1}
    assert list(codes(["b", "a", "zz"], where)) == [1, 0, -1]  # not in it: missing
    assert list(codes(["b"], where)) == [1] and list(codes([], where)) == []  # one, none
    assert list(codes(("a", "b", "b"), where)) == [0, 1, 1]
    assert codes(["a", []], where) is None  # (unhashable: not a string)
    assert list(codes(pa.array(["b", "zz", "a"], pa.large_string()), where)) == [1, -1, 0]
    assert codes(["a", None], where) is None
    assert codes(["a", 1], where) is None
    assert codes(pa.array(["a", None], pa.large_string()), where) is None


def test_seq_counts_events_from_zero() -> None:
    assert list(scl.load(GOOD).seq) == list(range(6))


def test_offsets_are_frame_starts_in_the_bytes() -> None:
    df = scl.load(GOOD)
    assert all(GOOD[o:].startswith(b"event: ") for o in df.offset)


def test_t_is_nan_without_timing() -> None:
    assert scl.load(GOOD).t.isna().all()


def test_chars_counts_code_points() -> None:
    assert scl.load(GOOD).chars.iloc[3] == len('"caf\u00e9"}')


def test_raw_adds_the_data_text() -> None:
    df = scl.load(GOOD, raw=True)
    assert json.loads(df.data.iloc[0]) == START


# -- sources ------------------------------------------------------------------------

def test_bytes_source_is_named_by_the_caller() -> None:
    assert set(scl.load(GOOD, name="demo").turn) == {"demo"}


def test_path_source_is_named_by_its_stem(tmp_path) -> None:
    (tmp_path / "two-calls.sse").write_bytes(GOOD)
    assert set(scl.load(tmp_path / "two-calls.sse").turn) == {"two-calls"}


def test_str_path_source(tmp_path) -> None:
    (tmp_path / "a.sse").write_bytes(GOOD)
    assert len(scl.load(str(tmp_path / "a.sse"))) == 6


def test_directory_loads_every_capture_in_order(tmp_path) -> None:
    (tmp_path / "b.sse").write_bytes(GOOD)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.sse").write_bytes(GOOD)
    (tmp_path / "notes.txt").write_text("not a capture")
    assert list(scl.load(tmp_path).turn.unique()) == ["b", "sub/a"]


def test_directory_order_is_path_order_part_by_part(tmp_path) -> None:
    """"a/b" before "a-c" (as Path sorts), though "-" sorts before "/" in a string."""
    for rel in ("a-c.sse", "a/b.sse", "a.sse", "A/z.sse", ".hidden/x.sse", "q/r.s.sse"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_bytes(GOOD)
    expected = sorted(p for p in tmp_path.rglob("*") if p.suffix == ".sse")
    assert [c.path for c in resolve(tmp_path)] == expected
    assert [c.name for c in resolve(tmp_path)] == [
        ".hidden/x", "A/z", "a/b", "a-c", "a", "q/r.s"]


def test_directory_never_follows_a_symlinked_folder(tmp_path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.sse").write_bytes(GOOD)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert [c.name for c in resolve(tmp_path)] == ["real/a"]


def test_glob_source(tmp_path) -> None:
    for name in ("x1.sse", "x2.sse", "y.sse"):
        (tmp_path / name).write_bytes(GOOD)
    assert list(scl.load(str(tmp_path / "x*.sse")).turn.unique()) == ["x1", "x2"]


def test_binary_file_object_source() -> None:
    assert scl.load(io.BytesIO(GOOD)).equals(scl.load(GOOD, name="<stream>"))


def test_text_file_object_is_refused() -> None:
    with pytest.raises(TypeError, match="binary mode"):
        scl.load(io.StringIO(GOOD.decode()))


def test_iterable_of_chunks_source() -> None:
    chunks = [GOOD[i : i + 7] for i in range(0, len(GOOD), 7)]
    pd.testing.assert_frame_equal(scl.load(iter(chunks), name="x"), scl.load(GOOD, name="x"))


def test_a_list_of_paths_reads_as_its_folder_does(tmp_path) -> None:
    for name in ("b.sse", "a.sse", "notes.txt"):
        (tmp_path / name).write_bytes(GOOD)
    listed = sorted(tmp_path.glob("*.sse"))
    pd.testing.assert_frame_equal(scl.load(listed), scl.load(tmp_path))
    pd.testing.assert_frame_equal(scl.load(tuple(map(str, listed))), scl.load(tmp_path))
    pd.testing.assert_frame_equal(scl.load(tmp_path.glob("*.sse")).sort_values(
        ["turn", "seq"], ignore_index=True), scl.load(tmp_path))  # a generator of paths


def test_a_list_of_paths_keeps_apart_files_of_one_name(tmp_path) -> None:
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "turn.sse").write_bytes(GOOD)
    got = scl.load([tmp_path / "x" / "turn.sse", tmp_path / "y" / "turn.sse",
                    tmp_path / "x"])
    assert list(got.turn.unique()) == ["x/turn", "y/turn"] and got.turn.eq("x/turn").sum() \
        == 2 * got.turn.eq("y/turn").sum()


def test_a_list_of_paths_names_a_missing_one(tmp_path) -> None:
    (tmp_path / "a.sse").write_bytes(GOOD)
    with pytest.raises(FileNotFoundError, match=r"nope\.sse"):
        scl.load([tmp_path / "a.sse", tmp_path / "nope.sse"])


@pytest.mark.parametrize("bad", [42, None, {"a": 1}, [b"data: {}\n\n", 3], ["a.sse", 3],
                                 (x for x in [1.5])])
def test_any_other_argument_is_one_line_naming_what_load_takes(bad) -> None:
    with pytest.raises(TypeError) as e:
        scl.load(bad)
    assert "a path (file, folder or glob), a list of paths, bytes" in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_path_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match=r"no capture at 'nowhere\.sse'"):
        scl.load("nowhere.sse")


def test_timing_sidecar_fills_t(tmp_path) -> None:
    path = tmp_path / "timed.sse"
    path.write_bytes(GOOD)
    cut = GOOD.index(b"event: content_block_stop")
    reads = f"t\tbytes\n0.0\t{cut}\n1.5\t{len(GOOD) - cut}\n"
    (tmp_path / "timed.sse.timing.tsv").write_text(reads)
    assert list(scl.load(path).t) == [0.0] * 4 + [1.5] * 2


def test_timing_sidecar_that_does_not_cover_the_bytes_is_refused(tmp_path) -> None:
    path = tmp_path / "timed.sse"
    path.write_bytes(GOOD)
    (tmp_path / "timed.sse.timing.tsv").write_text("t\tbytes\n0.0\t10\n")
    with pytest.raises(scl.CaptureError, match="covers 10 bytes but the capture has"):
        scl.load(path)


# -- bad input: strict raises naming source, offset and reason; lenient keeps the rest --

HTML = b"<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n"
BAD_JSON = GOOD + b'data: {"type": "content_block_delta", "index": 1,\n\n'
BAD_UTF8 = anthropic(START) + b'data: {"type":"ping","x":"\xc3("}\n\n'
CUT = GOOD[: GOOD.index(b"event: message_stop") + 20]
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

BAD = {
    "empty": (b"", 0, "empty capture"),
    "binary": (BINARY, 0, "binary data"),
    "html": (HTML, 0, "not an SSE field line: '<!DOCTYPE html>'"),
    "invalid_json": (BAD_JSON, len(GOOD), "invalid JSON in data"),
    "invalid_utf8": (BAD_UTF8, len(anthropic(START)) + 26, "invalid UTF-8 in data (byte 0xc3"),
    "cut_mid_frame": (CUT, GOOD.index(b"event: message_stop"), "stream ends inside a frame"),
}


@pytest.mark.parametrize("case", BAD)
def test_strict_mode_names_source_offset_and_reason(case: str) -> None:
    body, offset, reason = BAD[case]
    with pytest.raises(scl.CaptureError) as info:
        scl.load(body, name=f"{case}.sse")
    err = info.value
    assert (err.source, err.offset) == (f"{case}.sse", offset)
    assert reason in err.reason
    assert str(err).startswith(f"{case}.sse: byte {offset}: ")


@pytest.mark.parametrize("case", BAD)
def test_lenient_mode_keeps_good_rows_and_records_the_problem(case: str) -> None:
    body, offset, reason = BAD[case]
    df = scl.load(body, strict=False)
    errors = df[df.kind == "error"]
    frame_start = body.rfind(b"\n\n", 0, offset) + 2 if offset else 0
    assert list(errors.offset) == [offset]  # the row sits where strict names the problem
    assert reason in errors.problem.iloc[0]
    before = df[df.offset < frame_start]
    assert len(before) == (len(scl.load(body[:frame_start])) if frame_start else 0)


def test_lenient_invalid_json_keeps_every_good_row() -> None:
    df = scl.load(BAD_JSON, strict=False)
    assert list(df.kind.astype(str)[:-1]) == list(scl.load(GOOD).kind.astype(str))


def test_unexpected_payload_shape_is_an_error_not_a_traceback() -> None:
    body = anthropic(START, {"type": "content_block_delta", "delta": {}})  # no index
    with pytest.raises(scl.CaptureError, match="unexpected anthropic-messages payload: KeyError"):
        scl.load(body)


def test_columns_constant_names_every_column_in_order() -> None:
    from streamcalls_lab.loader import COLUMNS

    assert tuple(scl.load(GOOD).columns) == COLUMNS


# -- a run of one problem is one row: memory bounded in lenient mode ----------------------------
def _bad_frames(n: int, line: bytes = b"data: x\n\n") -> bytes:
    return line * n


def test_a_run_of_one_problem_is_one_row_with_its_count_and_first_offset() -> None:
    body = GOOD + _bad_frames(1000) + GOOD
    df = scl.load(body, strict=False)
    errors = df[df.kind == "error"]
    assert list(errors.repeats) == [1000]
    assert list(errors.offset) == [len(GOOD)]
    assert "invalid JSON in data" in errors.problem.iloc[0]
    assert df.repeats.sum() == len(df) - 1 + 1000  # every other row stands for itself
    assert df.frame[df.offset > len(GOOD)].iloc[0] == errors.frame.iloc[0] + 1000


def test_problems_that_differ_or_are_interrupted_are_rows_of_their_own() -> None:
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    body = GOOD + b"data: x\n\ndata: x\n\n" + ping + b"data: x\n\n" + b"data: \xff\n\n" * 2
    errors = scl.load(body, strict=False).query("kind == 'error'")
    assert list(errors.repeats) == [2, 1, 2]
    assert [p.split(" (")[0][:22] for p in errors.problem] == [
        "invalid JSON in data: ", "invalid JSON in data: ", "invalid UTF-8 in data"]


def test_strict_mode_still_stops_at_the_first_of_a_run() -> None:
    with pytest.raises(scl.CaptureError, match=f"byte {len(GOOD)}: invalid JSON"):
        scl.load(GOOD + _bad_frames(10))


def test_repeats_is_one_for_every_row_of_a_clean_load() -> None:
    df = scl.load(GOOD)
    assert str(df.repeats.dtype) == "int64" and set(df.repeats) == {1}


def test_many_bad_frames_in_lenient_mode_peak_at_a_bounded_size() -> None:
    """4x the bad frames, about the same peak (a row each took ~1 kB: 1M frames, 1.1 GB)."""
    def peak(n: int) -> int:
        body = GOOD + _bad_frames(n)
        tracemalloc.start()
        try:
            df = scl.load(body, strict=False)
            top = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (df.kind == "error").any()
        return top

    small, large = peak(5_000), peak(20_000)
    assert large < 2 * small, f"{small / 1e6:.1f} MB then {large / 1e6:.1f} MB"


def _peak(load) -> int:
    tracemalloc.start()
    try:
        load()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_one_long_capture_peaks_like_the_same_bytes_in_many_files() -> None:
    """A framing the fast path leaves to the incremental decoder: one long capture used to
    hold every frame (its whole data text) until the capture ended."""
    from streamcalls_lab._fastpath import whole_rows
    from streamcalls_lab.loader import load_captures
    from streamcalls_lab.sources import Capture

    # a comment line in a frame with fields (a comment frame alone the fast path passes over,
    # and then it holds a window's lines at once: not what this measures)
    turn = b": a comment\n" + GOOD
    assert whole_rows(turn) is None and whole_rows(turn * 500) is None
    one = _peak(lambda: load_captures([Capture("one", [turn * 500])]))
    many = _peak(lambda: load_captures([Capture(f"t{i}", [turn]) for i in range(500)]))
    assert one < 1.5 * many, f"one {one / 1e6:.1f} MB, many {many / 1e6:.1f} MB"


def _cut_recording(folder, reason: str = "IncompleteRead", *, torn: bool = True):
    from streamcalls_lab import provenance

    path = folder / "cut.sse"
    path.write_bytes(GOOD[:-30] if torn else GOOD[: GOOD.index(b"\n\n") + 2])
    provenance.write(path, {"source": "record", "cut_off": reason})
    return path


def test_frames_raises_for_a_recording_that_broke_off_between_frames(tmp_path) -> None:
    path = _cut_recording(tmp_path, torn=False)
    with pytest.raises(scl.CaptureError, match=rf"byte {path.stat().st_size}.*IncompleteRead"):
        list(scl.frames(path))


def test_lenient_frames_ends_a_broken_off_recording_with_a_problem_frame(tmp_path) -> None:
    path = _cut_recording(tmp_path)
    last = list(scl.frames(path, strict=False))[-1]
    assert last.offset == path.stat().st_size
    assert last.problem.startswith("cut: ") and "broke off" in last.problem


def test_frames_of_a_folder_with_an_unreadable_entry(tmp_path) -> None:
    (tmp_path / "a.sse").write_bytes(GOOD)
    (tmp_path / "b.sse").mkdir()  # a folder named like a capture
    with pytest.raises(scl.CaptureError, match=r"b\.sse"):
        list(scl.frames(tmp_path))
    got = list(scl.frames(tmp_path, strict=False))
    problems = [f.problem for f in got if f.problem]
    assert len(problems) == 1 and "b.sse" in problems[0] and "folder" in problems[0]
    assert len(got) == len(list(scl.frames(GOOD))) + 1  # a.sse's frames are all there


def test_a_folder_of_files_none_of_them_captures_is_an_error_saying_what_it_holds(
    tmp_path,
) -> None:
    for i in range(3):
        (tmp_path / f"chunks-{i}.jsonl").write_text('{"type": "text-delta"}\n')
    (tmp_path / "array.json").write_bytes(b'[{"candidates": []}]')
    with pytest.raises(FileNotFoundError, match=r"holds 3 \.jsonl, 1 \.json files"):
        scl.load(tmp_path, strict=False)
    with pytest.raises(FileNotFoundError, match="no capture in"):
        list(scl.frames(tmp_path))


def test_an_empty_folder_is_an_empty_table(tmp_path) -> None:
    assert len(scl.load(tmp_path)) == 0


def test_a_json_array_named_by_a_glob_loads(tmp_path) -> None:
    (tmp_path / "array.json").write_bytes(
        b'[{"candidates": [{"content": {"parts": [{"text": "hi"}]}, "index": 0}]}]')
    df = scl.load(str(tmp_path / "*.json"))
    assert set(df.provider) == {"gemini"} and set(df.turn) == {"array"}


def test_captures_read_ahead_still_fail_in_their_order(tmp_path, monkeypatch) -> None:
    """load() reads a group of captures (and frames them) before it gathers their rows;
    what goes wrong is still raised, or given as error rows, in the captures' order: a
    capture that cannot be read after a broken one is not what strict mode raises."""
    import os

    from streamcalls_lab.loader import load_captures
    from streamcalls_lab.sources import Capture

    (tmp_path / "a.sse").write_bytes(b"data: {not json\n\n")
    (tmp_path / "b.sse").write_bytes(GOOD)
    (tmp_path / "c.sse").write_bytes(GOOD)
    for n in range(40):  # more than one group
        (tmp_path / f"d{n:02d}.sse").write_bytes(GOOD)
    real_open = os.open

    def shut(path, *args, **kwargs):
        if os.fspath(path).endswith(("b.sse", "d39.sse")):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", shut)
    with pytest.raises(scl.CaptureError) as e:
        scl.load(tmp_path)
    assert e.value.source == "a" and "invalid JSON" in e.value.reason
    df = scl.load(tmp_path, strict=False)
    firsts = df.drop_duplicates("turn")
    assert firsts.turn.tolist() == ["a", "b", "c", *(f"d{n:02d}" for n in range(40))]
    errors = df[df.kind == "error"]
    assert errors.turn.tolist() == ["a", "b", "d39"]
    assert all("cannot be read" in p for p in errors.problem.iloc[1:])
    assert df[df.turn == "c"].equals(df[df.turn == "d00"].assign(turn="c")
                                     .set_axis(df[df.turn == "c"].index))

    def listed(first: bytes):  # a source whose listing fails after its first capture
        yield Capture("one", [first])
        raise RuntimeError("the listing failed")

    with pytest.raises(scl.CaptureError):  # the capture before it, first
        load_captures(listed(b"data: {not json\n\n"))
    with pytest.raises(RuntimeError, match="the listing failed"):
        load_captures(listed(GOOD))
