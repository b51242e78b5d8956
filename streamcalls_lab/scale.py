"""Many captures at once: in parallel on the local cores, to and from Parquet, on Dask.

Every path here gives the same rows as :func:`streamcalls_lab.load`, in the same order:
the captures a source stands for are cut into groups of consecutive files, each group is
loaded by :func:`~streamcalls_lab.loader.load_captures` (in a worker process, or as one
Dask partition), and the parts are put back in file order. A turn is never split between
two groups, so per-turn analyses (``calls()``, fragment statistics) run on each part.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from tqdm.auto import tqdm

from ._calls import calls
from .decode import UNKNOWN
from .loader import load_captures
from .providers import READERS
from .sources import CAPTURE_SUFFIXES, Capture, Source, resolve

if TYPE_CHECKING:
    import dask.dataframe as dd

GROUP_BYTES = 8 << 20
"""Bytes of captures per group: big enough that a part's dataframe costs little, small
enough that a progress bar moves and a Dask partition fits easily in a worker."""
PROVIDERS = tuple(sorted([*READERS, UNKNOWN]))
"""Every value ``provider`` can take: the fixed categories Dask partitions share."""

Group = list[Capture]
"""Consecutive capture files, as the listing made them (their sidecars already read): what
a worker is sent, pickled, to read the files themselves. Sent as paths, each was resolved
again in the worker, a quarter of its time."""
_POOLS: dict[int, ProcessPoolExecutor] = {}
"""Worker processes kept between calls: starting one imports pandas (and, from a script,
the script's own imports again), which costs more than loading a few hundred captures."""


def capture_groups(source: Source, group_bytes: int = GROUP_BYTES) -> list[Group]:
    """The files of ``source`` (a directory, glob or file) in load order, in groups.

    A group closes once it holds ``group_bytes`` of captures; every group has at least one.
    """
    caps = resolve(source)
    return _grouped(caps, _sizes(caps), group_bytes)


def _sizes(caps: Sequence[Capture]) -> list[int]:
    """Each capture file's size; a capture that is not a file is refused."""
    sizes = []
    for cap in caps:
        if not _is_file(cap):
            raise ValueError(f"{cap.name!r} is not a capture file; load it with load()")
        assert cap.path is not None
        sizes.append(cap.path.stat().st_size)
    return sizes


def _grouped(caps: Sequence[Capture], sizes: Sequence[int], group_bytes: int) -> list[Group]:
    groups: list[Group] = []
    size = group_bytes
    for cap, n in zip(caps, sizes, strict=True):
        if size >= group_bytes:
            groups.append([])
            size = 0
        groups[-1].append(cap)
        size += n
    return groups


def _shares(total: int, group_bytes: int, workers: int) -> int:
    """A group size of at most ``group_bytes`` that cuts ``total`` bytes into a multiple of
    ``workers`` groups of about one size: with 8 MB groups, 25 MB on two workers was four
    groups, one of them small, and one worker loaded two while the other loaded one."""
    groups = -(-total // max(1, group_bytes))  # (rounded up)
    groups = max(1, -(-groups // workers) * workers)
    return max(1, min(group_bytes, -(-total // groups)))


def load_parallel(
    source: Source,
    *,
    workers: int | None = None,
    progress: bool = True,
    group_bytes: int = GROUP_BYTES,
    **load_options: Any,
) -> pd.DataFrame:
    """:func:`load` of a directory (or glob) on several processes, with a progress bar.

    Equal to ``load(source, **load_options)``: same rows, order and dtypes; in strict mode
    the error raised is the one ``load`` would raise first. ``workers`` defaults to the
    cores this process may use; the worker processes are kept for the next call (see
    :func:`shutdown_workers`). A source that is not capture files (bytes, a HAR) is loaded
    here, in this process.
    """
    caps = resolve(source)
    if not all(_is_file(c) for c in caps):
        return load_captures(caps, **load_options)
    sizes = _sizes(caps)
    workers = workers or _cores()
    groups = _grouped(caps, sizes, _shares(sum(sizes), group_bytes, workers))
    workers = min(workers, len(groups)) or 1
    bar = tqdm(total=len(caps), unit="capture", disable=not progress, desc="load")
    parts: list[pd.DataFrame | None] = [None] * len(groups)
    errors: dict[int, BaseException] = {}
    with bar:
        if workers == 1:
            for i, group in enumerate(groups):
                parts[i] = load_group(group, load_options)
                bar.update(len(group))
        else:
            pool = _pool(workers)
            futures = {pool.submit(load_group, g, load_options): i
                       for i, g in enumerate(groups)}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    parts[i] = future.result()
                except BrokenProcessPool:  # a worker died: start afresh next time
                    _POOLS.pop(workers).shutdown(cancel_futures=True)
                    raise
                except Exception as e:  # re-raised below, in file order
                    errors[i] = e
                bar.update(len(groups[i]))
    if errors:
        raise errors[min(errors)]
    return combine([p for p in parts if p is not None], load_options.get("raw", False))


def shutdown_workers() -> None:
    """Stop the worker processes :func:`load_parallel` keeps for the next call."""
    while _POOLS:
        _POOLS.popitem()[1].shutdown()


def load_group(group: Group, load_options: dict[str, Any]) -> pd.DataFrame:
    """One group's rows (what a worker process or a Dask task runs)."""
    return load_captures(group, **load_options)


def combine(parts: Sequence[pd.DataFrame], raw: bool = False) -> pd.DataFrame:
    """Parts in order as one ``load()`` table (``provider`` categories are what occurs)."""
    if not parts:
        return load_captures([], raw=raw)
    cats = sorted({c for p in parts for c in p["provider"].cat.categories})
    same = [p.assign(provider=p["provider"].cat.set_categories(cats)) for p in parts]
    return pd.concat(same, ignore_index=True)  # categoricals of one dtype stay categorical


# -- Parquet ---------------------------------------------------------------------------------
def to_parquet(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a ``load()`` or ``calls()`` table; :func:`read_parquet` gives it back equal."""
    out = Path(path)
    table.to_parquet(out, engine="pyarrow", index=False)
    return out


def read_parquet(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A table written by :func:`to_parquet` (or a directory of Dask parts), dtypes intact."""
    where = Path(path)
    if where.is_dir():  # Dask's parts, in part order (part.10 after part.9, not part.1)
        parts = sorted(where.glob("*.parquet"), key=lambda p: _natural(p.name))
        df = pd.concat([pd.read_parquet(p, engine="pyarrow") for p in parts])
    else:
        df = pd.read_parquet(where, engine="pyarrow")
    return _as_load(df.reset_index(drop=True))


# -- Dask --------------------------------------------------------------------------------------
def load_dask(
    source: Source, *, group_bytes: int = GROUP_BYTES, **load_options: Any
) -> dd.DataFrame:
    """A Dask dataframe of ``load(source)``: one partition per group of whole captures.

    Nothing is read until it is computed, and then on the cluster's workers, which must
    see the same paths (a shared disk). ``provider`` has the fixed categories
    :data:`PROVIDERS` in every partition; :func:`collect` gives back exactly ``load()``.
    """
    import dask.dataframe as dd

    groups = capture_groups(source, group_bytes)
    meta = _fixed(load_captures([], raw=load_options.get("raw", False)))
    return dd.from_map(_dask_part, groups, meta=meta, label="load-captures",
                       enforce_metadata=False, options=load_options)


def calls_dask(deltas: dd.DataFrame) -> dd.DataFrame:
    """:func:`calls` on every partition (a turn never spans two); :func:`collect` joins them."""
    meta = _fixed(calls(load_captures([])))
    return deltas.map_partitions(_calls_part, meta=meta)


def collect(frame: dd.DataFrame) -> pd.DataFrame:
    """Compute a Dask result into the pandas table the pandas path gives.

    Dask turns ``str`` columns into ``string[pyarrow]`` (missing is ``pd.NA``, not NaN);
    they come back as ``str``, over the same Arrow data.
    """
    return _as_load(frame.compute().reset_index(drop=True))


def _dask_part(group: Group, options: dict[str, Any]) -> pd.DataFrame:
    return _fixed(load_group(group, options))


def _calls_part(deltas: pd.DataFrame) -> pd.DataFrame:
    return _fixed(calls(deltas))


# -- helpers -------------------------------------------------------------------------------------
def _is_file(cap: Capture) -> bool:
    return cap.path is not None and cap.path.suffix in CAPTURE_SUFFIXES


def _fixed(df: pd.DataFrame) -> pd.DataFrame:
    """``provider`` with every possible category, so all partitions have one dtype."""
    values = df["provider"].astype("str")
    if not values.isin(PROVIDERS).all():
        raise ValueError(f"provider outside {PROVIDERS}: {sorted(set(values) - set(PROVIDERS))}")
    return df.assign(provider=pd.Categorical(values, categories=pd.Index(PROVIDERS, dtype="str")))


def _as_load(df: pd.DataFrame) -> pd.DataFrame:
    """Dtypes as ``load()`` and ``calls()`` give them, after Dask or a Parquet dataset.

    Dask writes ``str`` columns as ``string[pyarrow]`` (missing is ``pd.NA``): back to
    ``str`` over the same Arrow data. ``provider`` categories: the values present, sorted.
    """
    strings = [c for c, t in df.dtypes.items()
               if isinstance(t, pd.StringDtype) and t.na_value is pd.NA]
    df = df.astype(dict.fromkeys(strings, "str"))
    if not len(df):
        return df
    values = df["provider"].astype("str")
    cats = pd.Index(sorted(values.unique()), dtype="str")
    return df.assign(provider=pd.Categorical(values, categories=cats))


def _natural(name: str) -> list[int | str]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _pool(workers: int) -> ProcessPoolExecutor:
    pool = _POOLS.get(workers)
    if pool is None:
        pool = _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=_context())
    return pool


def _context() -> multiprocessing.context.BaseContext:
    # Never fork a process that may hold threads (Arrow's pool, a Jupyter kernel): a forked
    # child can inherit a held lock. A fork server starts clean and forks workers cheaply.
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])  # workers start with pandas already imported
        return ctx
    return multiprocessing.get_context("spawn")
