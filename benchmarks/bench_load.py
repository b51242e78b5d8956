"""How fast and how big: load() against its peers, memory, and the per-call analyses' curve.

    python benchmarks/bench_load.py                  # the whole run (a few minutes)
    python benchmarks/bench_load.py --mb 20 --max-calls 100000   # a quicker look

Every figure that matters is a ratio measured in this one run, so a slow or busy machine
shifts all of them together. Throughput is CPU time (``time.process_time``): the machine may
be shared, and another process's work should not count. The contenders are interleaved (one
round of each, ``--repeat`` rounds), and the best and the median round are shown, so a
slow spell of the machine hits them all alike.

1. A corpus of at least ``--mb`` megabytes is built in a temporary directory by looping
   over the real recordings of the three formats (each copy a turn of its own; nothing is
   written into the repository).
2. Throughput, every contender reading the same files: ``load()``; ``load()`` of the base
   commit (``--base``, 456f426: exported with ``git archive`` into a temporary directory
   and imported as ``streamcalls_lab_base``), so before and after are measured in one run;
   ``load()`` with its fast path turned off (every frame through the incremental decoder);
   ``scl.anomalies`` of the table ``load()`` returns (it must cost at most half a load);
   the official ``anthropic`` SDK's ``SSEDecoder.iter_bytes`` + ``json.loads``;
   ``sseclient-py`` + ``json.loads`` when installed; and a bare bound that only splits
   frames on blank lines and ``orjson.loads`` each data line, building nothing. Each peer
   runs twice: as its users run it, and with the garbage collector paused as ``load()``
   pauses it, so a ratio is not the collector's doing.
3. Memory: tracemalloc's peak during ``load()`` against the corpus size, the dataframe's
   own bytes per row and per delta, and one long single-file capture against the same
   bytes in many files.
4. Scale out: ``load_parallel`` on the local cores, and ``load_dask`` on a
   ``distributed.LocalCluster`` (wall time: several processes).
5. The per-call analyses from 1k to 1M calls on synthetic turns: ``calls()``, the
   fragment-size statistics, and ``check_handler``'s per-case work; linear means the
   time per call stays flat down the column.

On a real cluster: see docs/scale.md (``load_dask`` with ``Client("tcp://scheduler:8786")``,
the captures on a disk every worker sees).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable
from itertools import cycle, pairwise
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
from _timing import best

# Imported before any clock starts: importing the SDK takes longer than decoding a corpus.
from anthropic._streaming import SSEDecoder
from baseline import library_at

import streamcalls_lab as scl
from streamcalls_lab import _columns as columns
from streamcalls_lab import scale, stats
from streamcalls_lab.loader import events_frame, gc_paused, load_captures
from streamcalls_lab.sources import resolve

try:
    import sseclient
except ImportError:  # optional peer: pip install sseclient-py
    sseclient = None

REPO = Path(__file__).resolve().parents[1]
CAPTURES = Path(os.environ.get("STREAMCALLS_CAPTURES", REPO.parent / "shared" / "captures"))
FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")


# -- the corpus ----------------------------------------------------------------------------------
def build_corpus(root: Path, megabytes: float) -> tuple[list[Path], int]:
    """Copies of every well-formed recording of the three formats until the size is reached."""
    sources = []
    for fmt in FORMATS:
        for path in sorted((CAPTURES / fmt).glob("*.sse")):
            try:
                scl.load(path)
            except scl.CaptureError:
                continue  # every contender must be able to read every file
            sources.append(path)
    if not sources:
        sys.exit(f"no recordings under {CAPTURES} (set STREAMCALLS_CAPTURES)")
    files, total, loop = [], 0, 0
    while total < megabytes * 1e6:
        folder = root / f"loop{loop:03d}"
        folder.mkdir()
        for src in sources:
            dest = folder / f"{src.parent.name}__{src.name}"
            shutil.copyfile(src, dest)
            files.append(dest)
            total += dest.stat().st_size
        loop += 1
    return sorted(files), total


# -- the contenders ----------------------------------------------------------------------------
def read(path: Path) -> bytes:
    with open(path, "rb", buffering=0) as f:
        return f.read()


def json_payloads(datas: Iterable[str]) -> int:
    """json.loads every event's data but the OpenAI ``[DONE]`` sentinel; how many were parsed."""
    n = 0
    for data in datas:
        if data and data != "[DONE]":
            json.loads(data)
            n += 1
    return n


def sdk(files: list[Path]) -> int:
    return sum(json_payloads(sse.data for sse in SSEDecoder().iter_bytes(iter([read(path)])))
               for path in files)


def sseclient_py(files: list[Path]) -> int:
    return sum(json_payloads(event.data for event in sseclient.SSEClient([read(path)]).events())
               for path in files)


def bare(files: list[Path]) -> int:
    """Split on blank lines, orjson each data line, keep nothing: no load can beat this."""
    n = 0
    for path in files:
        for block in read(path).split(b"\n\n"):
            for line in block.split(b"\n"):
                if line.startswith(b"data:"):
                    data = line[5:].strip()
                    if data != b"[DONE]":
                        orjson.loads(data)
                        n += 1
    return n


def base_load(commit: str, into: Path) -> Callable[..., object] | None:
    """``load`` of ``commit``'s library, imported as ``streamcalls_lab_base``; None without git."""
    module = library_at(commit, into)
    return None if module is None else module.load


def paused(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with the garbage collector paused, as load() pauses it."""
    def run() -> object:
        with gc_paused():
            return fn()
    return run


def interleaved(contenders: dict[str, Callable[[], object]], rounds: int,
                clock: Callable[[], float]) -> dict[str, list[float]]:
    """Each contender's time in each round; a round runs every contender once."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            gc.collect()
            start = clock()
            fn()
            times[name].append(clock() - start)
    return times


def long_capture_memory(files: list[Path], root: Path, megabytes: float) -> None:
    """tracemalloc's peak for one long capture against the same bytes in many files."""
    chat = [p for p in files if p.name.startswith("openai-chat__") and "loop000" in str(p)]
    body, parts = b"", [p.read_bytes() for p in chat]
    while parts and len(body) < megabytes * 1e6:
        body += b"".join(parts)
    if not body:
        return
    one = root / "long" / "one.sse"
    many = root / "long" / "many"
    many.mkdir(parents=True)
    one.write_bytes(body)
    for i in range(-(-len(body) // len(b"".join(parts)))):
        for j, part in enumerate(parts):
            (many / f"{i:04d}-{j:04d}.sse").write_bytes(part)
    print(f"  one {len(body) / 1e6:.0f} MB Chat capture vs the same bytes in "
          f"{len(list(many.iterdir()))} files:")
    for name, src in (("one file", one), ("many files", many)):
        gc.collect()
        tracemalloc.start()
        scl.load(src)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"    {name:10s} peak {peak / 1e6:7.1f} MB = {peak / len(body):4.2f}x")
    shutil.rmtree(root / "long")


# -- synthetic turns for the curve --------------------------------------------------------------
ARGS = '{"city": "Zürich", "units": "metric", "days": 3}'


def synthetic_deltas(n_calls: int, per_turn: int = 4, pieces: int = 5) -> pd.DataFrame:
    """``n_calls`` calls as ``load()`` rows, built column-wise (no bytes, no parsing)."""
    cuts = np.linspace(0, len(ARGS), pieces + 1).astype(int)
    frags = [ARGS[a:b] for a, b in pairwise(cuts)]
    turn_rows: list[tuple] = []
    for block in range(per_turn):
        turn_rows.append(("call_start", block, f"call_{block}", "get_weather", None))
        turn_rows += [("args_delta", block, None, None, f) for f in frags]
        turn_rows.append(("block_stop", block, None, None, None))
    turn_rows.append(("turn_stop", None, None, None, None))
    turns = -(-n_calls // per_turn)
    width = len(turn_rows)
    kind, block, call_id, tool, fragment = (list(c) * turns for c in zip(*turn_rows,
                                                                           strict=True))
    n = width * turns
    providers = [FORMATS[i % 3] for i in range(turns)]
    return events_frame(
        turn=columns.repeated([f"t{i}" for i in range(turns)], [width] * turns),
        seq=np.tile(np.arange(width), turns), offset=np.tile(np.arange(width) * 120, turns),
        t=np.full(n, np.nan), provider=np.repeat(providers, width).tolist(), event=kind,
        kind=kind, block=block, call_id=call_id, tool=tool, fragment=fragment,
        wire_chars=[None if f is None else len(f) for f in fragment],
        frame=np.tile(np.arange(width), turns), final=[None] * n, problem=[None] * n,
    )


def check_cases(n_calls: int) -> Callable[[], None]:
    """check_handler's per-case work (run + explain) over enough cases for n_calls calls."""
    from streamcalls_lab import check

    pool = [c for c in check.event_cases() if c.expected]
    todo, calls = [], 0
    for case in cycle(pool):
        if calls >= n_calls:
            break
        todo.append(case)
        calls += len(case.expected)

    def run() -> None:
        for case in todo:
            check._findings(case, check._run(scl.Accumulator, case))

    return run


# -- the report ----------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=55, help="corpus size (default 55)")
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--max-calls", type=int, default=1_000_000, help="end of the curve")
    ap.add_argument("--no-dask", action="store_true", help="skip the LocalCluster run")
    ap.add_argument("--base", default="456f426",
                    help="commit whose load() runs beside today's ('' to skip)")
    ap.add_argument("--long-mb", type=float, default=50, help="the single long capture's size")
    opts = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="streamcalls-bench-") as tmp, \
            tempfile.TemporaryDirectory(prefix="streamcalls-bench-base-") as base_dir:
        root = Path(tmp)
        files, size = build_corpus(root, opts.mb)
        mb = size / 1e6
        print(f"corpus: {len(files)} captures, {mb:.1f} MB in {root}")

        print(f"\n== throughput (CPU seconds over {opts.repeat} interleaved rounds) ==")
        peers: dict[str, Callable[[], object]] = {
            "anthropic SDK SSEDecoder + json.loads": lambda: sdk(files),
            "bare bound: split + orjson.loads": lambda: bare(files),
        }
        if sseclient is not None:
            peers["sseclient-py + json.loads"] = lambda: sseclient_py(files)
        else:
            print("(sseclient-py not installed: pip install sseclient-py)")
        contenders: dict[str, Callable[[], object]] = {"load()": lambda: scl.load(root)}
        before = base_load(opts.base, Path(base_dir)) if opts.base else None
        if before is not None:
            contenders[f"load() at {opts.base}"] = lambda: before(root)
        table = scl.load(root)  # what anomalies() reads: timed beside the load that made it
        contenders["anomalies() of load()'s table"] = lambda: scl.anomalies(table)
        contenders["load(), incremental decoder only"] = lambda: load_captures(
            resolve(root), bulk=False)
        for name, fn in peers.items():
            contenders[name] = fn
            contenders[f"{name}, gc paused"] = paused(fn)
        times = interleaved(contenders, opts.repeat, time.process_time)
        seconds = {k: min(v) for k, v in times.items()}
        print(f"  {'':44s} {'best':>7s} {'median':>7s}  {'MB/s':>6s}  load() is")
        ours = seconds["load()"]
        for name, ts in times.items():
            print(f"  {name:44s} {min(ts):7.3f} {statistics.median(ts):7.3f}  "
                  f"{mb / min(ts):6.1f}  {min(ts) / ours:5.2f}x as fast")
        if before is not None:
            then = seconds[f"load() at {opts.base}"]
            print(f"  load() vs load() at {opts.base}: {then / ours:5.2f}x (above 1: faster now)")
        print(f"  fast path vs incremental decoder: "
              f"{seconds['load(), incremental decoder only'] / ours:5.2f}x")
        scan = seconds["anomalies() of load()'s table"]
        print(f"  anomalies() costs {scan / ours:4.2f}x a load() of the same corpus "
              "(target: at most 0.5x)")

        print("\n== memory ==")
        gc.collect()
        tracemalloc.start()
        deltas = scl.load(root)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        frame_bytes = int(deltas.memory_usage(deep=True).sum())
        n_deltas = int(deltas["kind"].isin(["args_delta", "text_delta"]).sum())
        print(f"  rows {len(deltas):,}, of them deltas {n_deltas:,}")
        print(f"  load peak (tracemalloc)  {peak / 1e6:8.1f} MB = {peak / size:4.2f}x the "
              "capture size (target < 3x; Arrow's own buffers are not traced, the next "
              "line counts them)")
        print(f"  dataframe                {frame_bytes / 1e6:8.1f} MB = "
              f"{frame_bytes / size:4.2f}x; {frame_bytes / len(deltas):6.0f} B per row, "
              f"{frame_bytes / n_deltas:6.0f} B per delta")
        del deltas
        long_capture_memory(files, root, opts.long_mb)

        print("\n== scale out (wall seconds) ==")
        wall = best(lambda: scl.load(root), opts.repeat, time.perf_counter)
        print(f"  load()                                {wall:7.3f} s")
        cores = scale._cores()
        scale.load_parallel(root, progress=False)  # starts the workers, kept for later calls
        par = best(lambda: scale.load_parallel(root, progress=False), opts.repeat,
                   time.perf_counter)
        scale.shutdown_workers()
        print(f"  load_parallel() on {cores} cores          {par:7.3f} s  ({wall / par:4.2f}x)")
        if not opts.no_dask:
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=min(2, cores), threads_per_worker=1,
                              dashboard_address=None) as cluster, Client(cluster):
                ddf = scale.load_dask(root)
                dsk = best(lambda: scale.collect(ddf), 2, time.perf_counter)
                print(f"  load_dask() on a LocalCluster ({ddf.npartitions} partitions) "
                      f"{dsk:7.3f} s  ({wall / dsk:4.2f}x)")

        print(f"\n== per-call analyses, 1k to {opts.max_calls:,} calls (CPU seconds) ==")
        print(f"  {'calls':>9} {'rows':>10} | {'calls()':>8} {'us/call':>8} | "
              f"{'stats':>7} {'us/call':>8} | {'check':>7} {'us/call':>8}")
        n = 1000
        while n <= opts.max_calls:
            table_in = synthetic_deltas(n)
            t_calls = best(lambda d=table_in: scl.calls(d), 1, time.process_time)
            table = scl.calls(table_in)
            t_stats = best(lambda d=table_in, c=table: (stats.size_summary(d),
                                                        stats.delta_fit(c)), 1,
                           time.process_time)
            t_check = best(check_cases(n), 1, time.process_time)
            print(f"  {n:>9,} {len(table_in):>10,} | {t_calls:8.2f} {1e6 * t_calls / n:8.1f} | "
                  f"{t_stats:7.2f} {1e6 * t_stats / n:8.1f} | "
                  f"{t_check:7.2f} {1e6 * t_check / n:8.1f}")
            del table_in, table
            n *= 10


if __name__ == "__main__":
    main()
