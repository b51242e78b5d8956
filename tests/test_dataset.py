"""The Parquet dataset and DuckDB views: what goes in comes back, for any reader of the files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import dataset, turns
from streamcalls_lab.producers import anomalies
from streamcalls_lab.turns import Call, Script, Text

from .conftest import DATA

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


def _turn(path: Path, call_id: str = "call_1", host: str | None = None,
          recorded: str | None = None, fmt: str = "openai-chat") -> Path:
    script = Script((Text(("Hi",)), Call("get_weather", call_id, ('{"city": ', '"Paris"}'))))
    path.write_bytes(turns.turn_bytes(fmt, script))
    if host is not None or recorded is not None:
        meta = {"url": f"https://{host}/v1/chat/completions" if host else None,
                "recorded_at": recorded}
        path.with_name(path.name + ".meta.json").write_text(json.dumps(meta))
    return path


def _sorted(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


def test_the_bundled_data_comes_back_equal_from_duckdb(tmp_path: Path) -> None:
    scl.to_parquet(DATA, tmp_path / "ds", progress=False)
    back = dataset.read_dataset(tmp_path / "ds")
    want = _sorted(scl.load(DATA, strict=False), ["turn", "seq"])
    pd.testing.assert_frame_equal(back.drop(columns=list(dataset.SERVED)), want,
                                  check_categorical=False)
    got_calls = dataset.read_dataset(tmp_path / "ds", "calls")
    want_calls = scl.calls(scl.load(DATA, strict=False))
    assert len(got_calls) == len(want_calls)
    key = ["turn", "call_id", "args"]
    pd.testing.assert_frame_equal(
        _sorted(got_calls, key)[want_calls.columns.drop("provider")],
        _sorted(want_calls, key).drop(columns="provider"), check_dtype=False)


def test_views_have_the_contract_columns_in_order(tmp_path: Path) -> None:
    con = scl.duckdb(scl.to_parquet(DATA, tmp_path / "ds", progress=False))
    for name in dataset.TABLES:
        cols = [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()]
        assert cols == dataset.columns_of(name)
    deltas = [r[0] for r in con.execute("DESCRIBE deltas").fetchall()]
    assert deltas[:13] == ["turn", "seq", "offset", "t", "provider", "event", "kind", "block",
                           "choice", "call_id", "tool", "fragment", "chars"]


def test_partitions_are_format_host_and_recorded_day(tmp_path: Path) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    _turn(caps / "a.sse", host="api.example.com", recorded="2026-11-30T23:59:59+00:00")
    _turn(caps / "b.sse")
    root = scl.to_parquet(caps, tmp_path / "ds", progress=False)
    parts = sorted(p.relative_to(root / "deltas").parent.as_posix()
                   for p in (root / "deltas").rglob("*.parquet"))
    assert parts == [
        "provider=openai-chat/host=__HIVE_DEFAULT_PARTITION__/day=__HIVE_DEFAULT_PARTITION__",
        "provider=openai-chat/host=api.example.com/day=2026-11-30"]
    con = scl.duckdb(root)
    rows = con.execute("SELECT turn, host, CAST(day AS VARCHAR) FROM calls ORDER BY turn")
    rows = rows.fetchall()
    assert rows == [("a", "api.example.com", "2026-11-30"), ("b", None, None)]


@pytest.mark.parametrize("host", ["a b", "x%2Fy", "host=evil", "..", "caf\u00e9.example",
                                  "a/b/../c", "__HIVE_DEFAULT_PARTITION__x"])
def test_any_host_a_table_holds_comes_back_as_it_was(tmp_path: Path, host: str) -> None:
    deltas = scl.load(_turn(tmp_path / "a.sse")).assign(host=host, model="m", day=None)
    root = scl.to_parquet(deltas, tmp_path / "ds", progress=False)
    assert all(root in p.parents for p in root.rglob("*"))  # no partition value left the folder
    assert scl.duckdb(root).execute("SELECT DISTINCT host FROM deltas").fetchall() == [(host,)]


def test_a_table_without_rows_is_an_empty_view_of_the_same_columns(tmp_path: Path) -> None:
    root = scl.to_parquet(scl.load(_turn(tmp_path / "a.sse")), tmp_path / "ds", progress=False)
    assert not (root / "anomalies").exists() or not any((root / "anomalies").rglob("*.parquet"))
    con = scl.duckdb(root)
    assert con.execute("SELECT count(*) FROM anomalies").fetchone() == (0,)
    assert [r[0] for r in con.execute("DESCRIBE anomalies").fetchall()] == \
        dataset.columns_of("anomalies")


def test_a_generator_of_tables_is_written_one_table_at_a_time(tmp_path: Path) -> None:
    """Memory holds one part: each table is on disk before the next is asked for."""
    root = tmp_path / "ds"
    written: list[int] = []

    def parts() -> Iterator[pd.DataFrame]:
        for i in range(3):
            written.append(len(list((root / "deltas").rglob("*.parquet")))
                           if (root / "deltas").exists() else 0)
            yield scl.load(_turn(tmp_path / f"t{i}.sse", call_id=f"call_{i}"))

    scl.to_parquet(parts(), root, progress=False)
    assert written == [0, 1, 2]
    assert scl.duckdb(root).execute("SELECT count(*) FROM calls").fetchone() == (3,)


def test_captures_are_read_a_group_at_a_time(tmp_path: Path) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    for i in range(5):
        _turn(caps / f"t{i}.sse", call_id=f"call_{i}")
    root = scl.to_parquet(caps, tmp_path / "ds", progress=False, group_bytes=1)
    assert len({p.name.split("-")[1] for p in (root / "deltas").rglob("*.parquet")}) == 5
    want = scl.calls(scl.load(caps))
    got = dataset.read_dataset(root, "calls")
    assert sorted(got["call_id"]) == sorted(want["call_id"])


def test_anomalies_land_with_their_turns_server(tmp_path: Path) -> None:
    deltas = scl.load(DATA, strict=False)
    want = anomalies(deltas)
    assert len(want), "the bundled data shows some producer quirks"
    con = scl.duckdb(scl.to_parquet(deltas.assign(model="m1", host="h", day="2026-01-02"),
                                    tmp_path / "ds", progress=False))
    got = con.execute("SELECT anomaly, count(*) FROM anomalies WHERE model = 'm1' "
                      "GROUP BY ALL").fetchall()
    assert dict(got) == want["anomaly"].astype("str").value_counts().to_dict()


def test_dask_reads_the_same_files(tmp_path: Path) -> None:
    dd = pytest.importorskip("dask.dataframe")
    root = scl.to_parquet(DATA, tmp_path / "ds", progress=False)
    got = dd.read_parquet(root / "calls",
                          dataset={"partitioning": dataset.partitioning()}).compute()
    assert len(got) == len(scl.calls(scl.load(DATA, strict=False)))
    assert {"provider", "host", "day", "args", "call_id"} <= set(got.columns)
    assert got["host"].isna().all()  # the bundled data records no server


def test_an_existing_dataset_is_kept_unless_overwrite(tmp_path: Path) -> None:
    root = scl.to_parquet(DATA, tmp_path / "ds", progress=False)
    (root / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        scl.to_parquet(DATA, root, progress=False)
    scl.to_parquet(scl.load(_turn(tmp_path / "a.sse")), root, overwrite=True, progress=False)
    assert scl.duckdb(root).execute("SELECT count(DISTINCT turn) FROM deltas").fetchone() == (1,)
    assert (root / "notes.txt").read_text() == "mine"


def test_a_damaged_capture_is_a_row_with_its_problem_or_raises_in_strict(tmp_path: Path) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    _turn(caps / "ok.sse")
    (caps / "bad.sse").write_bytes(b'data: {"choices": [{"delta": {"tool_calls": [{"ind')
    con = scl.duckdb(scl.to_parquet(caps, tmp_path / "ds", progress=False))
    problems = con.execute("SELECT turn FROM deltas WHERE problem IS NOT NULL").fetchall()
    assert ("bad",) in problems
    with pytest.raises(scl.CaptureError, match="bad"):
        scl.to_parquet(caps, tmp_path / "ds2", progress=False, strict=True)


def test_what_is_not_a_dataset_or_a_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="holds no dataset"):
        scl.duckdb(tmp_path)
    with pytest.raises(TypeError, match="to_parquet\\(\\) takes"):
        scl.to_parquet(b"data: {}\n\n", tmp_path / "ds")  # type: ignore[arg-type]
    glob_dir = tmp_path / "a[1]"
    scl.to_parquet(DATA, glob_dir, progress=False)
    with pytest.raises(ValueError, match="glob characters"):
        scl.duckdb(glob_dir)
    with pytest.raises(ValueError, match="no table"):
        dataset.read_dataset(tmp_path, "turns")


@pytest.mark.captures
def test_the_real_captures_round_trip_call_for_call(captures, tmp_path: Path) -> None:
    con = scl.duckdb(scl.to_parquet(captures, tmp_path / "ds", progress=False))
    want = scl.calls(scl.load(captures, strict=False))
    got = con.execute("SELECT turn, call_id, args FROM calls").df()
    assert len(got) == len(want)
    pair = ["turn", "call_id", "args"]
    pd.testing.assert_frame_equal(_sorted(got.astype("str"), pair),
                                  _sorted(want[pair].astype("str"), pair))


def test_a_table_spread_over_more_than_a_thousand_partitions_is_written(tmp_path: Path) -> None:
    # pyarrow's default refuses a write into more than 1,024 folders
    one = scl.load(_turn(tmp_path / "a.sse"))
    many = pd.concat([one.assign(turn=f"t{i}", host=f"h{i}.example", model="m", day=None)
                      for i in range(1100)], ignore_index=True)
    root = scl.to_parquet(many, tmp_path / "ds", progress=False)
    con = scl.duckdb(root)
    assert con.execute("SELECT count(DISTINCT host) FROM calls").fetchone() == (1100,)
