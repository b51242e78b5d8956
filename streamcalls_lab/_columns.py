"""Python values to typed pandas columns, in bulk.

``load()`` and ``calls()`` gather plain Python values (hundreds of thousands of them on a
large directory) and type them once at the end. pandas 3 keeps ``str`` columns in Arrow
when pyarrow is installed, so building the Arrow array directly skips pandas' per-value
checks; without pyarrow every helper falls back to the plain pandas constructor, which
gives the same column.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

try:
    import pyarrow as pa
    import pyarrow.compute as pc

    ARROW = pd.StringDtype(na_value=np.nan).storage == "pyarrow"
except ImportError:  # pragma: no cover - pandas 3 without pyarrow keeps str in Python
    ARROW = False

_ODD = (TypeError, ValueError, OverflowError)  # pyarrow's errors derive from these


def strings(values: Sequence[Any]) -> ExtensionArray:
    """A ``str`` column; None becomes missing."""
    if ARROW and len(values):
        try:
            return pd.array(pa.array(values, type=pa.large_string()), dtype="str")
        except _ODD:
            pass  # not all str: let pandas convert the odd value as it always has
    return pd.array(values, dtype="str")


def ints(values: Sequence[Any]) -> ExtensionArray:
    """A nullable ``Int64`` column; None becomes NA."""
    if ARROW and len(values):
        try:
            return _int64(pa.array(values, type=pa.int64()))
        except _ODD:
            pass
    return pd.array(values, dtype="Int64")


def category(values: Sequence[str], categories: Sequence[str] | None = None) -> pd.Categorical:
    """A categorical column: the given categories, or the values seen in sorted order.

    Arrow's dictionary encoding finds the distinct values in C; only those few are mapped
    to category codes in Python.
    """
    if ARROW and len(values):
        try:
            enc = pa.array(values, type=pa.large_string()).dictionary_encode()
        except _ODD:
            enc = None
        if enc is not None and not enc.indices.null_count:
            seen = enc.dictionary.to_pylist()
            cats = sorted(seen) if categories is None else list(categories)
            where = {c: i for i, c in enumerate(cats)}
            remap = np.array([where.get(v, -1) for v in seen], dtype="int64")
            codes = remap[enc.indices.to_numpy()]
            return pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype="str"))
    return pd.Categorical(list(values), categories=categories)


def codes(values: Sequence[Any], where: dict[str, int]) -> np.ndarray | None:
    """Each value's code in ``where`` (-1 for a string it does not hold), as numbers: a list
    by one lookup a value in C, an Arrow array through its dictionary (a lookup a distinct
    value). None where a value is not a string (missing, or of another type): the caller
    then types the column the usual way, which says what is wrong."""
    if ARROW and isinstance(values, pa.Array):
        enc = values.dictionary_encode()
        if enc.indices.null_count:
            return None
        seen = enc.dictionary.to_pylist()
        if not all(type(v) is str for v in seen):
            return None
        remap = np.array([where.get(v, -1) for v in seen], dtype=np.int64)
        return remap[enc.indices.to_numpy()]
    try:
        if len(where) < 256 and len(values) > 1:  # one byte a code, looked up and taken in C
            # (an itemgetter of every value looks each up with no call per value, and gives a
            # tuple, which bytes() reads without an iterator; of one value it gives the value)
            return np.frombuffer(bytes(itemgetter(*values)(where)), np.uint8)
        return np.fromiter(map(where.__getitem__, values), np.int64, len(values))
    except (KeyError, TypeError):  # a string not in ``where``, or not a string
        if not all(type(v) is str for v in values):
            return None
        return np.array([where.get(v, -1) for v in values], dtype=np.int64)


def unzipped(rows: Sequence[tuple[Any, ...]], kinds: str) -> list[Any] | None:
    """The columns of ``rows`` (tuples alike), each typed by its letter in ``kinds`` (``s``:
    string, ``i``: integer), as Arrow arrays that :func:`strings`, :func:`ints` and
    :func:`category` take as they take lists: one pass in C instead of a ``zip`` and a
    conversion per column. None without Arrow or where a value is not of its column's type:
    the caller then unzips the rows itself, and those helpers say what is wrong."""
    if not ARROW or not rows:
        return None
    kind = {"s": pa.large_string(), "i": pa.int64()}
    struct = pa.struct([(str(n), kind[k]) for n, k in enumerate(kinds)])
    try:
        table = pa.array(rows, type=struct)
    except _ODD:
        return None
    return table.flatten()


def _arrow_type(kind: str) -> Any:
    return pa.large_string() if kind == "s" else pa.int64()


def nulls(n: int, kind: str) -> Sequence[Any]:
    """``n`` missing values of a column of ``kind`` (``s`` or ``i``, as :func:`unzipped`):
    an Arrow array made without a Python value each, or a list without Arrow."""
    return pa.nulls(n, _arrow_type(kind)) if ARROW else [None] * n


def interleaved(parts: Sequence[Sequence[Any]], order: Any, kind: str) -> Sequence[Any]:
    """The values of ``parts`` end to end, taken in ``order`` (indexes; None: as they stand).

    An Arrow array of ``kind`` where every value is of it (:func:`strings`, :func:`ints` and
    :func:`category` take it as they take a list), else a list, whose odd value those
    helpers then report as they always have."""
    if ARROW:
        try:
            arrays = [p if isinstance(p, pa.Array) else pa.array(p, type=_arrow_type(kind))
                      for p in parts]
        except _ODD:
            pass
        else:
            filled = [a for a in arrays if len(a)] or arrays[:1]
            both = filled[0] if len(filled) == 1 else pa.concat_arrays(filled)
            return both if order is None else both.take(order)
    values = [v for p in parts for v in (p.to_pylist() if ARROW and isinstance(p, pa.Array)
                                          else p)]
    return values if order is None else [values[i] for i in order]


def scattered(values: Any, at: np.ndarray, n: int) -> Any:
    """A ``str`` column of ``n`` rows, missing but at the ascending positions ``at``, which
    hold ``values`` (an Arrow large-string array, missing values included) in order.

    Built from Arrow's buffers with numpy: for a column nearly all missing (a call's id, a
    problem) this is much less work than a ``take`` over every row. Needs Arrow."""
    kept = values.drop_null()
    if not len(kept):
        return pa.nulls(n, pa.large_string())
    pos = at[values.is_valid().to_numpy(zero_copy_only=False)]
    _, offs, data = kept.buffers()
    offs = np.frombuffer(offs, dtype=np.int64)[kept.offset:kept.offset + len(kept) + 1]
    lengths = np.zeros(n, dtype=np.int64)
    lengths[pos] = np.diff(offs)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    valid = np.zeros(n, dtype=bool)
    valid[pos] = True
    return pa.Array.from_buffers(
        pa.large_string(), n,
        [pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(offsets),
         pa.py_buffer(b"") if data is None else data.slice(int(offs[0]),
                                                             int(offs[-1] - offs[0]))],
        null_count=n - len(pos))


def repeated(names: Sequence[str], counts: Sequence[int]) -> ExtensionArray:
    """A ``str`` column holding ``names[i]`` ``counts[i]`` times, in order."""
    index = np.repeat(np.arange(len(names)), np.asarray(counts, dtype="int64"))
    if ARROW and len(index):
        return pd.array(pc.take(pa.array(names, type=pa.large_string()), index), dtype="str")
    return pd.array([names[i] for i in index], dtype="str")


def lengths(column: ExtensionArray) -> ExtensionArray:
    """``len()`` of each string in code points, as ``Int64`` (NA where the string is missing)."""
    dtype = column.dtype
    if ARROW and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return _int64(pc.utf8_length(pa.array(column)))
    return pd.Series(column).str.len().astype("Int64").array


def _int64(arrow: Any) -> ExtensionArray:
    values = arrow.fill_null(0).to_numpy(zero_copy_only=False).astype("int64", copy=False)
    mask = arrow.is_null().to_numpy(zero_copy_only=False)
    return pd.arrays.IntegerArray(values, mask)
