"""A corpus too big for one dataframe: a partitioned Parquet dataset, and DuckDB over it.

:func:`to_parquet` writes three tables side by side under one folder, each a Hive-partitioned
Parquet dataset (``provider=…/host=…/day=…/part-….parquet``), the layout DuckDB, Dask, Spark
and pyarrow all read without being told it:

- ``deltas/``: :func:`~streamcalls_lab.load`'s rows;
- ``calls/``: :func:`~streamcalls_lab._calls` of them;
- ``anomalies/``: :func:`~streamcalls_lab.anomalies` of them.

Each row also carries its turn's ``host``, ``model`` and ``day`` (the date the capture was
recorded): who served it, as :func:`~streamcalls_lab.producers.served.served_by` says, and
when, as its provenance says (null where nothing does; a file's modification time is not a
recording time, so it is never used). ``calls()`` and ``anomalies()`` need whole turns, so a
corpus is converted a group of whole captures at a time (:func:`~.scale.capture_groups`):
memory holds one group, never the corpus.

:func:`duckdb` opens a folder so written as views ``deltas``, ``calls`` and ``anomalies``,
their columns in ``docs/contract.md``'s order, then ``host``, ``model`` and ``day``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from tqdm.auto import tqdm

from . import provenance
from ._calls import calls
from .loader import load_captures
from .producers.scan import anomalies
from .producers.served import served_rows
from .scale import GROUP_BYTES, capture_groups, load_group
from .sources import Source

if TYPE_CHECKING:
    import duckdb as _duckdb

TABLES = ("deltas", "calls", "anomalies")
"""The tables a dataset folder holds, each in a subfolder of that name."""
PARTITIONS = ("provider", "host", "day")
"""Hive partition keys, outermost first: a question about one format, server or day reads
only its folders."""
SERVED = ("host", "model", "day")
"""The columns every table gains: who served the turn, and the day it was recorded."""
_GLOB_CHARS = frozenset("*?[]{}")


def _empty(name: str) -> pd.DataFrame:
    deltas = load_captures([])
    return {"deltas": deltas, "calls": calls(deltas), "anomalies": anomalies(deltas)}[name]


def _recorded_day(path: Path | None) -> date | None:
    meta = provenance.read(path) if path is not None else None
    stamp = meta.get("recorded_at") if meta else None
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp).date()
    except ValueError:  # a hand-edited sidecar: no day rather than a wrong one
        return None


def _served(caps: list[Any]) -> pd.DataFrame:
    """``turn``, ``host``, ``model``, ``day`` for each capture of a group."""
    who = served_rows(caps)
    days = [_recorded_day(cap.path) for cap in caps]
    return pd.DataFrame({"turn": who["turn"], "host": who["host"], "model": who["model"],
                         "day": pd.Series(days, dtype="object")})


def _tables(deltas: pd.DataFrame, served: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """The three tables of one group of whole turns, each with the served columns."""
    if served is None:  # a table handed in: its own host/model/day columns, where it has them
        have = [c for c in SERVED if c in deltas.columns]
        served = deltas[["turn", *have]].drop_duplicates("turn")
        deltas = deltas.drop(columns=have)
    for col in SERVED:
        if col not in served.columns:
            served = served.assign(**{col: None})
    out = {"deltas": deltas, "calls": calls(deltas), "anomalies": anomalies(deltas)}
    return {name: table.merge(served, on="turn", how="left", validate="many_to_one")
            for name, table in out.items()}


def _arrow(table: pd.DataFrame) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    day = table["day"]
    if not pd.api.types.is_datetime64_any_dtype(day):  # dates, ISO strings, or all missing
        day = pd.to_datetime(day.astype("object"), errors="coerce")
    out = pa.Table.from_pandas(table.assign(provider=table["provider"].astype("str"), day=day),
                               preserve_index=False)
    host = out["host"].cast(pa.string())
    # An empty host names no server (urlsplit gives None there); as a partition value "" is
    # no folder name, so it is written as the null it means.
    host = pc.if_else(pc.equal(host, ""), pa.scalar(None, pa.string()), host)
    fixed = {"host": host, "model": out["model"].cast(pa.string()),
             "day": out["day"].cast(pa.timestamp("us")).cast(pa.date32())}
    for name, column in fixed.items():
        out = out.set_column(out.schema.get_field_index(name), name, column)
    return out


def partitioning() -> Any:
    """The dataset's partitioning for pyarrow (``pyarrow.dataset.dataset(...,
    partitioning=partitioning())``) and Dask (``dd.read_parquet(folder / "calls",
    dataset={"partitioning": partitioning()})``): with it they need not infer the keys' types
    from folder names, which fails where a key is null in every folder (no host recorded)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    keys = pa.schema([("provider", pa.string()), ("host", pa.string()), ("day", pa.date32())])
    return ds.partitioning(keys, flavor="hive")


def _write(tables: dict[str, pd.DataFrame], root: Path, part: int) -> None:
    import pyarrow.dataset as ds

    for name, table in tables.items():
        if not len(table):
            continue
        # pyarrow refuses a write into more than max_partitions folders (1,024 by default):
        # a group of captures spans as many as its formats, hosts and days combine to
        spread = len(table[list(PARTITIONS)].drop_duplicates())
        ds.write_dataset(_arrow(table), root / name, format="parquet",
                         partitioning=partitioning(), max_partitions=max(1024, spread),
                         basename_template=f"part-{part:06d}-{{i}}.parquet",
                         existing_data_behavior="overwrite_or_ignore")


def _groups(data: pd.DataFrame | Iterable[pd.DataFrame] | Source, strict: bool,
            group_bytes: int) -> tuple[int | None, Iterator[dict[str, pd.DataFrame]]]:
    if isinstance(data, pd.DataFrame):
        return 1, iter([_tables(data, None)])
    if isinstance(data, str | os.PathLike):
        groups = capture_groups(data, group_bytes)

        def read() -> Iterator[dict[str, pd.DataFrame]]:
            for group in groups:
                yield _tables(load_group(group, {"strict": strict}), _served(group))

        return sum(map(len, groups)), read()
    if isinstance(data, Iterable) and not isinstance(data, bytes | bytearray | memoryview):
        return None, (_tables(part, None) for part in data)
    raise TypeError("to_parquet() takes a load() table, an iterable of load() tables, or a "
                    f"folder, glob or file of captures; not {type(data).__name__}")


def to_parquet(
    data: pd.DataFrame | Iterable[pd.DataFrame] | str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    strict: bool = False,
    progress: bool = True,
    group_bytes: int = GROUP_BYTES,
) -> Path:
    """Write ``data`` as a partitioned Parquet dataset under ``folder``; return the folder.

    ``data`` is a ``load()`` table, an iterable of ``load()`` tables (each holding whole
    turns: a generator keeps memory to one table), or a folder, glob or file of captures,
    read a group of whole captures at a time. A table's own ``host``, ``model`` and ``day``
    columns are kept where it has them; captures get theirs from their provenance, stream
    and ``INDEX.tsv``. Captures are read leniently unless ``strict``: a damaged one is rows
    with a ``problem``, as ``load(strict=False)`` gives. A folder that already holds a
    dataset is refused unless ``overwrite``, which replaces its three tables (and nothing
    else in the folder).
    """
    root = Path(folder)
    there = [root / name for name in TABLES if (root / name).exists()]
    if there and not overwrite:
        raise FileExistsError(f"{root} already holds a dataset ({there[0].name}/); "
                              "pass overwrite=True to replace it")
    for old in there:
        shutil.rmtree(old)
    root.mkdir(parents=True, exist_ok=True)
    total, parts = _groups(data, strict, group_bytes)
    with tqdm(total=total, unit="group" if total == 1 else "capture", disable=not progress,
              desc="parquet") as bar:
        for part, tables in enumerate(parts):
            _write(tables, root, part)
            bar.update(tables["deltas"]["turn"].nunique() if total and total > 1 else 1)
    return root


# -- DuckDB --------------------------------------------------------------------------------------
_SQL_TYPES = {"int64": "BIGINT", "Int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN",
              "boolean": "BOOLEAN"}


def _sql_type(dtype: Any) -> str:
    return _SQL_TYPES.get(str(dtype), "VARCHAR")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def columns_of(name: str) -> list[str]:
    """A table's columns in a dataset, in order: its contract columns, then :data:`SERVED`."""
    return [*_empty(name).columns, *SERVED]


def duckdb(folder: str | os.PathLike[str],
           connection: _duckdb.DuckDBPyConnection | None = None) -> _duckdb.DuckDBPyConnection:
    """A DuckDB connection (a new in-memory one, or ``connection``) with views ``deltas``,
    ``calls`` and ``anomalies`` over a folder :func:`to_parquet` wrote.

    A table with no rows (a corpus with no anomalies) is an empty view of the same columns.
    ``day`` is a ``DATE``; missing values are ``NULL``.
    """
    import duckdb as db

    root = Path(folder).resolve()
    if not any((root / name).is_dir() for name in TABLES):
        raise FileNotFoundError(f"{folder} holds no dataset: no {', '.join(TABLES)} folder "
                                "(write one with to_parquet)")
    if _GLOB_CHARS & set(str(root)):  # DuckDB reads the path as a glob, with no escape
        raise ValueError(f"{folder}: DuckDB reads a path as a glob, and this one has "
                         f"glob characters ({''.join(sorted(_GLOB_CHARS & set(str(root))))})")
    con = connection if connection is not None else db.connect()
    for name in TABLES:
        empty = _empty(name)
        types = {**{c: _sql_type(t) for c, t in empty.dtypes.items()},
                 "host": "VARCHAR", "model": "VARCHAR", "day": "DATE"}
        cols = columns_of(name)
        files = sorted((root / name).rglob("*.parquet")) if (root / name).is_dir() else []
        if files:
            where = _quoted(str(root / name / "**" / "*.parquet"))
            select = ", ".join(f'CAST("{c}" AS {types[c]}) AS "{c}"' for c in cols)
            source = f"read_parquet({where}, hive_partitioning = true, union_by_name = true)"
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT {select} FROM {source}")
        else:
            select = ", ".join(f'CAST(NULL AS {types[c]}) AS "{c}"' for c in cols)
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT {select} WHERE false")
    return con


def read_dataset(folder: str | os.PathLike[str], table: str = "deltas") -> pd.DataFrame:
    """One table of a dataset folder back in pandas, in turn order, with ``load()``'s dtypes
    (for a corpus that fits in memory; a larger one is queried with :func:`duckdb`)."""
    if table not in TABLES:
        raise ValueError(f"no table {table!r}: a dataset holds {', '.join(TABLES)}")
    con = duckdb(folder)
    order = "turn, seq" if table == "deltas" else 'turn, "offset"' if table == "anomalies" \
        else "turn, block"
    got = con.execute(f"SELECT * FROM {table} ORDER BY {order}").df()
    empty = _empty(table)
    fixed = {c: t for c, t in empty.dtypes.items() if not isinstance(t, pd.CategoricalDtype)}
    got = got.astype(fixed)
    for c, t in empty.dtypes.items():
        if isinstance(t, pd.CategoricalDtype):
            values = got[c].astype("str")
            cats = t.categories if len(t.categories) else pd.Index(sorted(values.unique()),
                                                                      dtype="str")
            got[c] = pd.Categorical(values, categories=cats)
    return got.astype({"host": "str", "model": "str"})
