"""Scale: parallel loads, Parquet, Dask; and the fast paths giving exactly the slow answers."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamcalls_lab as scl
from streamcalls_lab import scale
from streamcalls_lab.accumulate import Accumulator
from streamcalls_lab.framing.sse import _EOL, SSEDecoder
from streamcalls_lab.providers.as_written import wire_length, wire_lengths

from .conftest import DATA, capture_files

SMALL = 1 << 14  # bytes per group: several groups even for a handful of captures


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few dozen real captures of the three formats, in nested folders."""
    files = capture_files()
    if not files:
        pytest.skip("real captures not found")
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(6)
    for path in rng.sample(files, 36):
        if scl.load(path, strict=False)["kind"].eq("error").any():
            continue  # strict loads below need well-formed captures
        dest = root / path.parent.name / path.name
        dest.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, dest)
    return root


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    scale.shutdown_workers()  # load_parallel keeps its processes for the next call


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                 dashboard_address=None) as local,
        distributed.Client(local) as client,
    ):
        yield client


# -- parallel --------------------------------------------------------------------------------
def test_groups_hold_every_capture_once_in_load_order(corpus: Path) -> None:
    groups = scale.capture_groups(corpus, SMALL)
    names = [cap.name for group in groups for cap in group]
    assert len(groups) > 2 and names == list(scl.load(corpus)["turn"].unique())


@pytest.mark.parametrize(("total", "group_bytes", "workers", "share"), [
    (25 << 20, 8 << 20, 2, -(-(25 << 20) // 4)),  # four groups of a quarter, not 8, 8, 8 and 1
    (10, 8, 2, 5), (16, 8, 2, 8), (100, 8, 1, 8), (100, 8, 3, 7), (0, 8, 2, 1), (5, 8, 4, 2)])
def test_the_workers_get_groups_of_one_size(total: int, group_bytes: int, workers: int,
                                            share: int) -> None:
    got = scale._shares(total, group_bytes, workers)
    assert got == share and 1 <= got <= group_bytes


def test_parallel_groups_share_the_bytes_evenly(corpus: Path) -> None:
    caps = scl.sources.resolve(corpus)
    sizes = scale._sizes(caps)
    share = scale._shares(sum(sizes), SMALL, 2)
    groups = scale._grouped(caps, sizes, share)
    by_cap = dict(zip(map(id, caps), sizes, strict=True))
    held = [sum(by_cap[id(c)] for c in g) for g in groups]
    assert [c for g in groups for c in g] == caps
    assert all(h >= share for h in held[:-1])  # each closes once it holds its share
    assert all(h < share + max(sizes) for h in held)  # (and holds no file more than that)


def test_parallel_load_equals_load(corpus: Path) -> None:
    got = scale.load_parallel(corpus, workers=2, group_bytes=SMALL, progress=False)
    pd.testing.assert_frame_equal(got, scl.load(corpus))


def test_parallel_load_with_options_equals_load(corpus: Path) -> None:
    got = scale.load_parallel(corpus, workers=2, group_bytes=SMALL, progress=False,
                              strict=False, raw=True)
    pd.testing.assert_frame_equal(got, scl.load(corpus, strict=False, raw=True))


def test_parallel_load_reads_timing_sidecars() -> None:
    got = scale.load_parallel(DATA, workers=2, group_bytes=SMALL, progress=False, strict=False)
    assert got["t"].notna().any()
    pd.testing.assert_frame_equal(got, scl.load(DATA, strict=False))


def test_parallel_strict_error_is_the_one_load_raises_first(corpus: Path, tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copytree(corpus, tmp_path / sub, dirs_exist_ok=True)
    (tmp_path / "a" / "cut.sse").write_bytes(b'data: {"x": 1}\n\ndata: {"y"')
    (tmp_path / "b" / "bad.sse").write_bytes(b"data: {nope}\n\n")
    with pytest.raises(scl.CaptureError) as expected:
        scl.load(tmp_path)
    with pytest.raises(scl.CaptureError) as got:
        scale.load_parallel(tmp_path, workers=2, group_bytes=SMALL, progress=False)
    assert str(got.value) == str(expected.value)


def test_a_source_of_bytes_loads_in_this_process() -> None:
    body = (DATA / "openai-chat" / "short-call.sse").read_bytes()
    pd.testing.assert_frame_equal(scale.load_parallel(body, progress=False), scl.load(body))


def test_progress_bar_counts_captures(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = len(scale.capture_groups(corpus, SMALL)[0])
    scale.load_parallel(corpus, workers=1, group_bytes=SMALL, progress=True)
    total = sum(len(g) for g in scale.capture_groups(corpus, SMALL))
    assert n < total and f"{total}/{total}" in capsys.readouterr().err


def test_combining_no_parts_gives_the_empty_load_table(tmp_path: Path) -> None:
    pd.testing.assert_frame_equal(scale.combine([]), scl.load(tmp_path))


# -- Parquet ---------------------------------------------------------------------------------
def test_parquet_round_trip_keeps_values_and_dtypes(corpus: Path, tmp_path: Path) -> None:
    deltas = scl.load(corpus, strict=False, raw=True)
    back = scale.read_parquet(scale.to_parquet(deltas, tmp_path / "d.parquet"))
    pd.testing.assert_frame_equal(back, deltas)


def test_parquet_round_trip_of_calls(corpus: Path, tmp_path: Path) -> None:
    table = scl.calls(corpus)
    back = scale.read_parquet(scale.to_parquet(table, tmp_path / "c.parquet"))
    pd.testing.assert_frame_equal(back, table)


def test_parquet_round_trip_of_lenient_errors(tmp_path: Path) -> None:
    body = (DATA / "openai-chat" / "short-call.sse").read_bytes()
    deltas = scl.load(b"data: {nope}\n\n" + body + b"data: {", strict=False)
    assert deltas["kind"].eq("error").sum() == 2
    back = scale.read_parquet(scale.to_parquet(deltas, tmp_path / "e.parquet"))
    pd.testing.assert_frame_equal(back, deltas)


# -- Dask --------------------------------------------------------------------------------------
def test_dask_partitions_are_the_capture_groups(corpus: Path) -> None:
    pytest.importorskip("dask.dataframe")
    ddf = scale.load_dask(corpus, group_bytes=SMALL)
    assert ddf.npartitions == len(scale.capture_groups(corpus, SMALL))


def test_dask_load_on_a_cluster_equals_load(corpus: Path, cluster) -> None:
    got = scale.collect(scale.load_dask(corpus, group_bytes=SMALL))
    pd.testing.assert_frame_equal(got, scl.load(corpus))


def test_dask_calls_on_a_cluster_equal_calls(corpus: Path, cluster) -> None:
    got = scale.collect(scale.calls_dask(scale.load_dask(corpus, group_bytes=SMALL)))
    pd.testing.assert_frame_equal(got, scl.calls(corpus))


def test_dask_fragment_sizes_per_provider_equal_pandas(corpus: Path, cluster) -> None:
    ddf = scale.load_dask(corpus, group_bytes=SMALL)
    frags = ddf[ddf["kind"] == "args_delta"]
    got = frags.groupby("provider", observed=True)["chars"].sum().compute()
    deltas = scl.load(corpus)
    want = deltas[deltas["kind"] == "args_delta"].groupby("provider", observed=True)["chars"]
    assert got.sort_index().to_dict() == want.sum().to_dict()


def test_parquet_written_by_dask_reads_back_as_load(corpus: Path, tmp_path: Path,
                                                   cluster) -> None:
    scale.load_dask(corpus, group_bytes=SMALL).to_parquet(tmp_path / "parts")
    pd.testing.assert_frame_equal(scale.read_parquet(tmp_path / "parts"), scl.load(corpus))


# -- the fast paths give the slow answers -----------------------------------------------------
class LineByLine(SSEDecoder):
    """The decoder as first written: every line through ``_line``, no bulk path."""

    def _lines(self, buf: bytes, stop: int) -> None:
        region, at = buf[:stop], self._pos
        if at == 0 and region.startswith(b"\xef\xbb\xbf"):
            region, at = region[3:], 3
        pieces = _EOL.split(region)
        pieces.pop()
        for line, eol in zip(pieces, _EOL.findall(region), strict=True):
            self._line(line, at, at + len(line) + len(eol))
            at += len(line) + len(eol)


def _frames(decoder: type[SSEDecoder], chunks: list[bytes]) -> list:
    dec = decoder("x", strict=False)
    return [f for c in chunks for f in dec.feed(c)] + dec.close()


def _cut(body: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(0, 6))))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def test_bulk_decoding_of_every_real_capture_equals_line_by_line(captures: Path) -> None:
    rng = random.Random(0)
    for path in sorted(captures.rglob("*.sse")):
        body = path.read_bytes()
        for chunks in ([body], _cut(body, rng)):
            assert _frames(SSEDecoder, chunks) == _frames(LineByLine, chunks), path.name


@given(st.lists(st.sampled_from([
    b"data: {}", b'event: e\ndata: {"a":1}', b"event: \ndata: x", b"data: \xc3\xa9",
    b"data: \xff", b": c", b"id: 7", b"retry: 5", b"data: a\ndata: b", b"junk", b"",
    b"event: \xff\ndata: x", b"event: a\ndata: b\ndata: c",
]), max_size=12), st.sampled_from([b"\n", b"\r\n", b"\r"]), st.randoms())
def test_bulk_decoding_of_odd_streams_equals_line_by_line(blocks, eol, rng) -> None:
    body = b"".join(b.replace(b"\n", eol) + eol + eol for b in blocks)
    for chunks in ([body], _cut(body, rng) if len(body) > 1 else [body]):
        assert _frames(SSEDecoder, chunks) == _frames(LineByLine, chunks)


@given(st.text(), st.sampled_from(["partial_json", "delta", "arguments"]),
       st.booleans(), st.sampled_from([(",", ":"), (", ", ": ")]))
def test_wire_length_shortcut_equals_the_scan(fragment, key, ascii_only, separators) -> None:
    payload = {"type": "x", "delta": {"note": fragment, key: fragment}}
    data = json.dumps(payload, ensure_ascii=ascii_only, separators=separators)
    assert wire_length(data, key, fragment) == wire_lengths(data, key)[0]


def _calls_row_by_row(deltas: pd.DataFrame) -> list[tuple]:
    """calls() as first written: groupby, then every row's dict fed to an Accumulator."""
    out = []
    fed = ["kind", "block", "call_id", "tool", "fragment", "wire_chars", "final"]
    for key, group in deltas.groupby(["turn", "provider"], sort=False, observed=True):
        acc = Accumulator()
        for event in group[fed].to_dict("records"):
            acc.feed(event)
        out += [(*key, b.block, b.call_id, b.tool, b.args, b.n_deltas, b.wire_chars,
                 b.complete, b.final) for b in acc.calls]
    return out


def _none(value: object) -> object:
    return None if value is pd.NA or (isinstance(value, float) and math.isnan(value)) else value


def test_calls_of_real_captures_equal_the_row_by_row_replay(captures: Path) -> None:
    deltas = scl.load(captures, strict=False)
    table = scl.calls(deltas)
    got = [tuple(_none(v) for v in row) for row in table[[
        "turn", "provider", "block", "call_id", "tool", "args", "n_deltas", "wire_chars",
        "complete"]].itertuples(index=False)]
    want = [row[:-1] for row in _calls_row_by_row(deltas)]
    assert got == [tuple(_none(v) for v in row) for row in want]
