"""A million turns: Parquet conversion in bounded memory, and DuckDB against pandas.

    python benchmarks/bench_million.py                    # 1,000,000 turns (several minutes)
    python benchmarks/bench_million.py --turns 200000 --pandas-turns 20000   # a quicker look

1. Templates: every real recording under ``../shared/captures`` is loaded once (``load()``),
   with who served it. A synthetic corpus is those turns copied, each copy a turn of its own
   with a synthetic host (one of ``--hosts``) and recording day (one of 30, in order, as logs
   are kept), so the partitions and group-bys have the spread of a fleet's logs. Nothing is
   written into the repository.
2. Conversion: ``scl.to_parquet`` of a generator of ``load()`` tables, ``--chunk`` turns each,
   in a child process per corpus size, so each size's peak resident memory is its own. Bounded
   memory means the peak does not grow with the corpus: the line to read is the peak at the
   full size against the peak at the size pandas holds (a tenth; about 1x), beside what the
   full corpus would take as one dataframe.
3. Questions a log analyst asks, each as SQL over the dataset's views and as pandas over the
   same rows in memory: calls per host; argument-fragment size percentiles per format; anomaly
   counts per model. pandas is run on the largest corpus it holds here (``--pandas-turns``),
   DuckDB on that same corpus and on the full one. Every figure is a ratio in this one run
   (wall time, best of ``--repeat``): the machine may be busy, and a ratio moves with it less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _timing import best  # noqa: E402

import streamcalls_lab as scl  # noqa: E402
from streamcalls_lab import dataset  # noqa: E402
from streamcalls_lab.producers.served import served_by  # noqa: E402

CAPTURES = Path(os.environ.get("STREAMCALLS_CAPTURES", REPO.parent / "shared" / "captures"))
DAYS = [f"2026-11-{d:02d}" for d in range(1, 31)]
QUESTIONS: dict[str, tuple[str, Callable[[dict[str, pd.DataFrame]], pd.DataFrame]]] = {
    "calls per host": (
        "SELECT host, count(*) AS calls FROM calls GROUP BY host ORDER BY calls DESC",
        lambda t: t["calls"].groupby("host", dropna=False).size()
        .sort_values(ascending=False).rename("calls").reset_index(),
    ),
    "fragment-size percentiles per format": (
        "SELECT provider, quantile_cont(chars, [0.5, 0.9, 0.99]) AS q FROM deltas "
        "WHERE kind = 'args_delta' AND chars > 0 GROUP BY provider ORDER BY provider",
        lambda t: t["deltas"].loc[lambda d: (d["kind"] == "args_delta") & (d["chars"] > 0)]
        .groupby("provider", observed=True)["chars"].quantile([0.5, 0.9, 0.99]).unstack()
        .reset_index(),
    ),
    "anomalies per model": (
        "SELECT model, anomaly, count(*) AS n FROM anomalies GROUP BY ALL ORDER BY n DESC",
        lambda t: t["anomalies"].groupby(["model", "anomaly"], observed=True, dropna=False)
        .size().sort_values(ascending=False).rename("n").reset_index(),
    ),
}


def templates() -> tuple[pd.DataFrame, np.ndarray]:
    """Every real recording's rows, with the model that served it, and where each turn's
    rows start (the last entry: the table's length)."""
    if not CAPTURES.is_dir():
        sys.exit(f"no recordings under {CAPTURES} (set STREAMCALLS_CAPTURES)")
    deltas = scl.load(CAPTURES, strict=False)
    served = served_by(CAPTURES)[["turn", "model"]]
    deltas = deltas.merge(served, on="turn", how="left")
    starts = np.flatnonzero(deltas["turn"].ne(deltas["turn"].shift()).to_numpy())
    return deltas, np.append(starts, len(deltas))


def corpus(turns: int, chunk: int, hosts: int) -> Iterator[pd.DataFrame]:
    """``turns`` synthetic turns, ``chunk`` to a table: real turns copied, each named anew,
    served by one of ``hosts`` hosts and recorded on one of 30 days, in day order (as logs
    are kept)."""
    base, bounds = templates()
    n_base = len(bounds) - 1
    made = 0
    while made < turns:
        ids = np.arange(made, min(made + chunk, turns))
        picked = ids % n_base
        sizes = bounds[picked + 1] - bounds[picked]
        rows = np.concatenate([np.arange(bounds[k], bounds[k + 1]) for k in picked])
        table = base.take(rows).reset_index(drop=True)
        table["turn"] = pd.Series(np.repeat([f"t{i:08d}" for i in ids], sizes), dtype="str")
        table["host"] = pd.Series(np.repeat([f"host-{i % hosts:03d}.example" for i in ids],
                                            sizes), dtype="str")
        table["day"] = pd.to_datetime(np.repeat([DAYS[i * len(DAYS) // turns] for i in ids],
                                                sizes))
        made += len(ids)
        yield table


def convert(turns: int, chunk: int, hosts: int, out: Path) -> dict[str, float]:
    """One conversion, as the child process measures it."""
    start = time.perf_counter()
    scl.to_parquet(corpus(turns, chunk, hosts), out, progress=False)
    seconds = time.perf_counter() - start
    size = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"turns": turns, "seconds": seconds, "peak_bytes": peak, "parquet_bytes": size}


def child(turns: int, chunk: int, hosts: int, out: Path) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--convert", str(turns), "--chunk", str(chunk),
           "--hosts", str(hosts), "--out", str(out)]
    got = subprocess.run(cmd, capture_output=True, text=True)
    if got.returncode:
        sys.exit(f"converting {turns:,} turns failed:\n{got.stderr[-4000:]}")
    return json.loads(got.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=1_000_000)
    ap.add_argument("--pandas-turns", type=int, default=100_000)
    ap.add_argument("--chunk", type=int, default=50_000)
    ap.add_argument("--hosts", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--convert", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.convert:
        print(json.dumps(convert(args.convert, args.chunk, args.hosts, args.out)))
        return

    with tempfile.TemporaryDirectory(prefix="bench-million-") as tmp:
        small, full = Path(tmp) / "small", Path(tmp) / "full"
        print(f"converting {args.pandas_turns:,} and {args.turns:,} synthetic turns "
              f"({args.chunk:,} a table), each in its own process ...", flush=True)
        at_small = child(args.pandas_turns, args.chunk, args.hosts, small)
        at_full = child(args.turns, args.chunk, args.hosts, full)
        for got in (at_small, at_full):
            print(f"  {got['turns']:>9,} turns: {got['seconds']:7.1f} s "
                  f"({got['turns'] / got['seconds']:,.0f} turns/s), peak memory "
                  f"{got['peak_bytes'] / 2**20:,.0f} MiB, "
                  f"Parquet {got['parquet_bytes'] / 2**20:,.0f} MiB")
        print(f"  peak memory at {args.turns:,} turns / at {args.pandas_turns:,}: "
              f"{at_full['peak_bytes'] / at_small['peak_bytes']:.2f}x (bounded: about 1x; "
              f"the corpus is {args.turns / args.pandas_turns:.0f}x larger)")
        con_small, con_full = scl.duckdb(small), scl.duckdb(full)
        rows = con_full.execute("SELECT count(*) FROM deltas").fetchone()[0]
        print(f"  {args.turns:,} turns are {rows:,} delta rows")

        start = time.perf_counter()
        tables = {name: dataset.read_dataset(small, name) for name in dataset.TABLES}
        load_s = time.perf_counter() - start
        held = sum(t.memory_usage(deep=True).sum() for t in tables.values())
        print(f"\npandas holds {args.pandas_turns:,} turns in {held / 2**20:,.0f} MiB "
              f"(read from Parquet in {load_s:.1f} s); the full corpus would take about "
              f"{held * args.turns / args.pandas_turns / 2**30:,.1f} GiB")
        print(f"\n{'question':<40}{'pandas':>10}{'duckdb':>10}{'ratio':>8}"
              f"{'duckdb ' + format(args.turns, ','):>20}")
        for name, (sql, in_pandas) in QUESTIONS.items():
            p = best(lambda f=in_pandas: f(tables), args.repeat, time.perf_counter)
            d = best(lambda s=sql: con_small.execute(s).fetchall(), args.repeat,
                     time.perf_counter)
            d_full = best(lambda s=sql: con_full.execute(s).fetchall(), args.repeat,
                          time.perf_counter)
            print(f"{name:<40}{p:>9.3f}s{d:>9.3f}s{p / d:>7.1f}x{d_full:>19.3f}s")
        print("\nratio: pandas time / DuckDB time on the same corpus (above 1: DuckDB faster); "
              "pandas' time leaves out reading the rows into memory, DuckDB's includes it.")


if __name__ == "__main__":
    main()
