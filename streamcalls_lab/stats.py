"""Measurements over ``load()`` and ``calls()`` tables: fragment sizes, counts, timing, anomalies.

Every function takes the dataframes the loader returns, so the same numbers come out of the
bundled data, the real recordings and a user's own directory. Sizes are always measured per
provider: the formats cut arguments very differently, and a pooled figure hides that.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _deepjson as deepjson
from ._calls import calls as _calls
from .accumulate import present
from .prefixes import strict_parses
from .sources import Source

FRAGMENT_KINDS = ("args_delta", "text_delta")
CALL_PROBLEMS = ("missing_stop", "merged_calls", "done_mismatch", "unannounced", "error")
"""What :func:`call_problems` names (what the producer did is ``scl.anomalies``)."""


@dataclass(frozen=True)
class ChapterFigures:
    """The figures the chapter quotes from a sample of production turns (Anthropic-style)."""

    chars_per_delta: float = 13.0
    short_chars: int = 24
    short_deltas: int = 2
    long_chars: int = 610
    long_deltas: int = 47


CHAPTER = ChapterFigures()
MIN_FIT_CALLS = 5
"""Fewest finished calls a notebook fits a line through (a line through one call is no evidence)."""
DELIVERY_COLUMNS = ("calls", "finished", "one_fragment", "shortest", "longest",
                    "delivery")
FIT_COLUMNS = ("calls", "slope", "chars_per_delta", "median_chars_per_delta", "ols_slope",
               "ols_intercept", "r2", "r2_without_longest", "min_chars", "max_chars", "fitted")


NOT_SAID = "(not said)"
"""The host or model of a turn no provenance, stream or index names."""
By = str | Sequence[str]


def _calls_of(deltas: pd.DataFrame, table: pd.DataFrame | None) -> pd.DataFrame:
    return _calls(deltas) if table is None else table


def with_server(frame: pd.DataFrame, served: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (any table with a ``turn`` column) plus each turn's ``host`` and ``model``
    from ``producers.served_by(source)``, :data:`NOT_SAID` where nothing says, so the
    servers one wire format pools can be told apart."""
    who = served[["turn", "host", "model"]].drop_duplicates("turn")
    out = frame.drop(columns=["host", "model"], errors="ignore").merge(who, on="turn",
                                                                      how="left")
    for col in ("host", "model"):
        out[col] = out[col].astype("string").fillna(NOT_SAID).astype("str")
    return out


def _keys(by: By) -> list[str]:
    return [by] if isinstance(by, str) else list(by)


def _label(key: object) -> str | tuple[str, ...]:
    """A group's key as an index label: a string, or a tuple of strings for several keys."""
    if isinstance(key, tuple):
        return key[0] if len(key) == 1 else tuple(str(k) for k in key)
    return str(key)


def _index(labels: Sequence[object], keys: list[str]) -> pd.Index:
    if len(keys) == 1:
        return pd.Index([str(x) for x in labels], name=keys[0], dtype="object")
    return pd.MultiIndex.from_tuples(list(labels), names=keys)


def with_call_numbers(deltas: pd.DataFrame) -> pd.DataFrame:
    """``deltas`` plus ``call``: which announcement of its block a row follows (0 = none yet).

    This is the accumulator's keying rule (by block; a re-announced block starts a new call)
    written as a column, so rows can be grouped per call without replaying the turn. Each
    of a Chat stream's ``n`` choices counts its own (``choice`` is NA for other formats).
    """
    out = deltas.copy()
    starts = (out["kind"] == "call_start").astype("int64")
    keyed = out["block"].notna()
    keys = [out.loc[keyed, c] for c in ("turn", "choice", "block") if c in out]
    numbers = starts[keyed].groupby(keys, sort=False, dropna=False).cumsum()
    out["call"] = pd.array(np.zeros(len(out), dtype="int64"), dtype="Int64")
    out.loc[keyed, "call"] = numbers.astype("Int64")
    out.loc[~keyed, "call"] = pd.NA
    return out


def fragments(deltas: pd.DataFrame, kind: str = "args_delta") -> pd.DataFrame:
    """The non-empty fragments of one kind (``args_delta`` or ``text_delta``), one row each."""
    if kind not in FRAGMENT_KINDS:
        raise ValueError(f"kind must be one of {FRAGMENT_KINDS}, not {kind!r}")
    rows = deltas[(deltas["kind"] == kind) & (deltas["chars"].fillna(0) > 0)]
    cols = ["turn", "provider", "block", "seq", "t", "fragment", "chars", "wire_chars"]
    return rows[cols].reset_index(drop=True)


def size_summary(deltas: pd.DataFrame, kind: str = "args_delta") -> pd.DataFrame:
    """Fragment size per provider: count, median, mean, p10, p90, max, and the escaped median
    (a :class:`~.rebuilt.RebuiltWarning` when turns an importer rebuilt are among them: their
    ``wire_chars`` measure the importer's escaping)."""
    from ._rebuilt import warn_rebuilt

    warn_rebuilt(deltas, "size_summary's wire_median")
    frags = fragments(deltas, kind)
    if frags.empty:
        return pd.DataFrame(
            columns=["fragments", "turns", "median", "mean", "p10", "p90", "max", "wire_median"]
        )
    chars = frags["chars"].astype("float64")
    wire = frags["wire_chars"].astype("float64")
    group = frags["provider"]
    table = pd.DataFrame({
        "fragments": chars.groupby(group, observed=True).size(),
        "turns": frags.groupby("provider", observed=True)["turn"].nunique(),
        "median": chars.groupby(group, observed=True).median(),
        "mean": chars.groupby(group, observed=True).mean(),
        "p10": chars.groupby(group, observed=True).quantile(0.1),
        "p90": chars.groupby(group, observed=True).quantile(0.9),
        "max": chars.groupby(group, observed=True).max(),
        "wire_median": wire.groupby(group, observed=True).median(),
    })
    table.index = table.index.astype("str")
    table.index.name = "provider"
    return table


def _fit_one(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    nan = float("nan")
    through_origin = float((x * y).sum() / (x * x).sum()) if (x * x).sum() else nan
    slope = intercept = r2 = nan
    if len(x) >= 2 and np.ptp(x) > 0:
        slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
        residual = y - (slope * x + intercept)
        spread = ((y - y.mean()) ** 2).sum()
        r2 = float(1 - (residual**2).sum() / spread) if spread else nan
    return {
        "slope": through_origin,
        "chars_per_delta": 1 / through_origin if through_origin else nan,
        "median_chars_per_delta": float(np.median(x / y)),
        "ols_slope": slope,
        "ols_intercept": intercept,
        "r2": r2,
    }


def delivery(table: pd.DataFrame, by: By = "provider") -> pd.DataFrame:
    """Per provider (or per ``by`` group: ``["provider", "host", "model"]`` once
    :func:`with_server` added them): does it stream a call's arguments, or send each call
    whole?

    Decided from the data: ``whole`` when every finished call with arguments came in one
    fragment (Gemini and Bedrock did, in the captures the kit was checked on), ``streamed``
    when any came in several, ``no finished calls`` otherwise. ``shortest`` and ``longest``
    give the finished calls' lengths in characters, so a verdict resting on short calls only
    shows it: "whole" says nothing about a call longer than ``longest``.
    """
    keys = _keys(by)
    rows, labels = [], []
    for key, group in table.groupby(keys, observed=True, dropna=False):
        mine = group[group["complete"] & (group["chars"] > 0)]
        one = int((mine["n_deltas"] <= 1).sum())
        verdict = ("no finished calls" if mine.empty
                   else "whole" if one == len(mine) else "streamed")
        labels.append(_label(key))
        rows.append({"calls": len(group), "finished": len(mine), "one_fragment": one,
                     "shortest": int(mine["chars"].min()) if len(mine) else 0,
                     "longest": int(mine["chars"].max()) if len(mine) else 0,
                     "delivery": verdict})
    out = pd.DataFrame(rows, columns=list(DELIVERY_COLUMNS), index=_index(labels, keys))
    return out.astype({"calls": "int64", "finished": "int64", "one_fragment": "int64",
                       "shortest": "int64", "longest": "int64", "delivery": "str"})


def sent_whole(table: pd.DataFrame, by: By = "provider") -> list[str]:
    """The providers (``by`` groups) that sent every finished call in one fragment (see
    :func:`delivery`)."""
    verdicts = delivery(table, by)
    return verdicts.index[verdicts["delivery"] == "whole"].tolist()


def _without_longest(x: np.ndarray, y: np.ndarray) -> float:
    """r² of the least-squares line once the longest call is left out (how much it carried)."""
    if len(x) < 4:
        return float("nan")
    keep = np.arange(len(x)) != int(np.argmax(x))
    return _fit_one(x[keep], y[keep])["r2"]


def delta_fit(table: pd.DataFrame, length: str = "chars", min_calls: int = 1,
              by: By = "provider") -> pd.DataFrame:
    """Deltas against argument length per provider (or per ``by`` group, such as
    ``["provider", "host", "model"]``: one wire format pools many servers, and their
    fragment sizes differ), over finished calls with any fragment.

    ``slope`` is deltas per character fitted through the origin (the chapter's model:
    count = length / fragment size), so ``chars_per_delta`` is its inverse. An ordinary
    least-squares line (``ols_slope``, ``ols_intercept``, ``r2``) shows how well it fits;
    ``r2_without_longest`` shows how much of that rests on the single longest call.
    ``length`` is ``chars`` (the argument string) or ``wire_chars`` (its escaped form).
    ``min_chars``/``max_chars`` give the range the line holds over. ``fitted`` is False,
    and the line's columns NaN, for a group that sends calls whole (no size to fit) or
    has fewer than ``min_calls`` calls.
    """
    keys = _keys(by)
    done = table[table["complete"] & (table["n_deltas"] > 0)]
    whole = set(sent_whole(table, by))
    rows, labels = [], []
    for key, group in done.groupby(keys, observed=True, dropna=False):
        label = _label(key)
        x = group[length].to_numpy(dtype="float64")
        y = group["n_deltas"].to_numpy(dtype="float64")
        fitted = label not in whole and len(group) >= min_calls
        line = _fit_one(x, y) if fitted else dict.fromkeys(_fit_one(x[:1], y[:1]), np.nan)
        labels.append(label)
        rows.append({
            "calls": len(group), **line,
            "r2_without_longest": _without_longest(x, y) if fitted else np.nan,
            "min_chars": float(x.min()), "max_chars": float(x.max()), "fitted": fitted})
    fit = pd.DataFrame(rows, columns=list(FIT_COLUMNS), index=_index(labels, keys))
    return fit.astype({"fitted": "bool"})


def predict_deltas(fit: pd.DataFrame, chars: int) -> pd.Series:
    """How many deltas each provider's fitted line gives a call of ``chars`` characters."""
    return (fit["slope"] * chars).rename(f"deltas_at_{chars}")


def chapter_comparison(table: pd.DataFrame, chapter: ChapterFigures = CHAPTER,
                       min_calls: int = 1, by: By = "provider") -> pd.DataFrame:
    """The chapter's figures beside what each provider's calls show (one row per provider).

    ``ratio`` is the provider's characters per delta over the chapter's: below 1 means the
    provider cuts arguments finer than the chapter says. A provider that sends calls whole
    takes one delta at every length measured, ``shortest`` to ``longest``; past ``longest``
    the data says nothing, so a prediction there is read as the extrapolation it is.
    """
    fit = delta_fit(table, min_calls=min_calls, by=by)
    whole = fit.index.isin(sent_whole(table, by))
    out = pd.DataFrame({
        "calls": fit["calls"],
        "chars_per_delta": fit["chars_per_delta"],
        "chapter_chars_per_delta": chapter.chars_per_delta,
        "ratio": fit["chars_per_delta"] / chapter.chars_per_delta,
        f"deltas_at_{chapter.short_chars}": predict_deltas(fit, chapter.short_chars).mask(
            whole, 1.0),
        f"chapter_at_{chapter.short_chars}": chapter.short_deltas,
        f"deltas_at_{chapter.long_chars}": predict_deltas(fit, chapter.long_chars).mask(
            whole, 1.0),
        f"chapter_at_{chapter.long_chars}": chapter.long_deltas,
        "r2": fit["r2"],
        "r2_without_longest": fit["r2_without_longest"],
        "shortest": fit["min_chars"],
        "longest": fit["max_chars"],
        "delivery": np.where(whole, "whole", np.where(fit["fitted"], "streamed", "too few")),
    })
    out["delivery"] = out["delivery"].astype("str")
    return out


def _compact_length(args: str) -> float:
    try:
        value = deepjson.loads(args)
    except ValueError:
        return float("nan")
    if isinstance(value, list | dict) and deepjson.depth(args) > deepjson.SHALLOW:
        return float(len(_compact(args)))
    return float(len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))))


_INSIGNIFICANT = re.compile(r'("(?:[^"\\]|\\.)*")|[ \t\n\r]+', re.DOTALL)


def _compact(args: str) -> str:
    """Valid JSON text without its insignificant whitespace (a value too deep to re-serialise;
    its escapes as written)."""
    return _INSIGNIFICANT.sub(lambda m: m.group(1) or "", args)


def escape_overhead(table: pd.DataFrame) -> pd.DataFrame:
    """Three lengths of each call's arguments, longest first in the usual case.

    ``wire_chars`` is the escaped form inside the frames (what the splits fall in),
    ``chars`` the argument string after the frame's JSON is read, and ``compact_chars`` the
    value re-serialised without spaces (what a log of parsed objects would count).
    """
    out = table[["turn", "provider", "block", "tool", "wire_chars", "chars"]].copy()
    out["compact_chars"] = table["args"].map(_compact_length).astype("float64")
    out["wire_over_chars"] = out["wire_chars"] / out["chars"].where(out["chars"] > 0)
    return out


def escape_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per provider: total characters in each of the three lengths and the escape overhead."""
    lengths = escape_overhead(table)
    sums = lengths.groupby("provider", observed=True)[["wire_chars", "chars", "compact_chars"]]
    out = sums.sum()
    out["wire_over_chars"] = out["wire_chars"] / out["chars"]
    out["chars_over_compact"] = out["chars"] / out["compact_chars"]
    out.index = out.index.astype("str")
    return out


def first_argument_times(deltas: pd.DataFrame) -> pd.DataFrame:
    """Per call: when it was announced, its first argument fragment, and its stop (seconds).

    Times count from the turn's first byte; all NaN for a capture without a timing sidecar.
    ``wait`` is the gap between the announcement and the first fragment.
    """
    rows = with_call_numbers(deltas)
    rows = rows[rows["call"].fillna(0) > 0]
    keys = ["turn", "provider", "block", "call"]
    start = rows[rows["kind"] == "call_start"].groupby(keys, observed=True).agg(
        call_id=("call_id", "first"), tool=("tool", "first"), t_start=("t", "first"))
    frag = rows[(rows["kind"] == "args_delta") & (rows["chars"].fillna(0) > 0)]
    first = frag.groupby(keys, observed=True)["t"].min().rename("t_first_arg")
    stops = rows[rows["kind"].isin(["block_stop", "args_done"])]
    stop = stops.groupby(keys, observed=True)["t"].min().rename("t_stop")
    out = start.join(first).join(stop).reset_index()
    out["wait"] = out["t_first_arg"] - out["t_start"]
    return out


CHUNK_KINDS = ("text_delta", "call_start", "args_delta")
"""What counts as a chunk for time to first chunk: generated text, and every part of a tool
call (an announcement included), as OpenTelemetry's GenAI conventions count it
(open-telemetry/semantic-conventions#3483); a service notice (``message_start``,
``response.created``) and an empty delta do not."""


def time_to_first_chunk(deltas: pd.DataFrame, source: Source | None = None) -> pd.DataFrame:
    """Per turn: when its first chunk came (:data:`CHUNK_KINDS`), as OpenTelemetry names it.

    ``t_first_chunk`` counts from the turn's first byte (NaN without a timing sidecar).
    ``request_to_first_byte`` is how long after the request was sent that first byte came:
    the proxy and ``record`` write it in the provenance sidecar, read here from ``source``'s
    captures (NaN where nothing recorded it). ``time_to_first_chunk`` is their sum, from
    when the request was sent: ``gen_ai.response.time_to_first_chunk``, in seconds (NaN
    unless both are known). A turn with no chunk at all has NaN for both.
    """
    turns = pd.Index(deltas["turn"].unique(), dtype="str", name="turn")
    content = deltas["kind"].isin(CHUNK_KINDS) & (
        deltas["kind"].eq("call_start") | (deltas["chars"].fillna(0) > 0))
    first = deltas[content].groupby("turn", sort=False)["t"].min()
    waits = request_waits(source) if source is not None else pd.Series(dtype="float64")
    out = pd.DataFrame({"t_first_chunk": first.reindex(turns).astype("float64"),
                        "request_to_first_byte": waits.reindex(turns).astype("float64")})
    out["time_to_first_chunk"] = out["t_first_chunk"] + out["request_to_first_byte"]
    return out.reset_index()


def request_waits(source: Source) -> pd.Series:
    """Per turn of ``source``: seconds from the request being sent to the body's first byte,
    as the provenance sidecar records it (``request_to_first_byte``), NaN where it does not."""
    from . import provenance
    from .sources import resolve

    waits = {}
    for cap in resolve(source):
        meta = provenance.read(cap.path) if cap.path is not None else None
        value = meta.get("request_to_first_byte") if meta else None
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        waits[cap.name] = float(value) if ok else float("nan")
    return pd.Series(waits, dtype="float64", name="request_to_first_byte")


def _json_values(text: str) -> int:
    """How many JSON values stand one after another in ``text`` (0 if it is not such a run)."""
    at, count = 0, 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at == len(text):
            return count
        try:
            _, at = deepjson.raw_decode(text, at)  # (at any depth)
        except ValueError:
            return 0
        count += 1


def call_problems(deltas: pd.DataFrame, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per call a careful client must hold back or question: which turn, which
    call, and why (:data:`CALL_PROBLEMS`; what the producer sent that is unusual is
    :func:`streamcalls_lab.anomalies`).

    - ``missing_stop``: a call whose stop (or done) event never arrived;
    - ``merged_calls``: one buffer holding several JSON values back to back;
    - ``done_mismatch``: a done event repeating a string the fragments do not add up to;
    - ``unannounced``: fragments for a key no call was announced on;
    - ``error``: an error row (provider error or unreadable frame).
    """
    table = _calls_of(deltas, table)
    found: list[dict[str, object]] = []

    def add(row: pd.Series, problem: str, detail: str) -> None:
        found.append({
            "turn": row["turn"], "provider": str(row["provider"]), "block": row["block"],
            "call_id": row["call_id"], "tool": row["tool"], "problem": problem,
            "detail": detail,
        })

    for _, row in table.iterrows():
        if not row["complete"]:
            add(row, "missing_stop",
                f"{row['n_deltas']} fragments, {row['chars']} chars, no stop event")
        values = _json_values(row["args"])
        if values >= 2:
            add(row, "merged_calls", f"{values} JSON values in one buffer")
        if row["final_matches"] is False:
            add(row, "done_mismatch", "the done event's string differs from the fragments")
        if isinstance(row["problem"], str) and "never announced" in row["problem"]:
            add(row, "unannounced", row["problem"])

    for _, row in deltas[deltas["kind"] == "error"].iterrows():
        add(row, "error", f"at byte {row['offset']}: {row['problem']}")

    out = pd.DataFrame(found, columns=[
        "turn", "provider", "block", "call_id", "tool", "problem", "detail"])
    return out.astype({
        "turn": "str", "provider": "str", "block": "Int64", "call_id": "str", "tool": "str",
        "problem": "str", "detail": "str",
    })


def anomalies(deltas: pd.DataFrame, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Deprecated: :func:`call_problems` (whose ``problem`` column was ``anomaly``); a block
    announced twice is now the producer quirk ``index_reuse`` of ``scl.anomalies``."""
    warnings.warn("stats.anomalies is now stats.call_problems (producer quirks, index_reuse "
                  "among them, are streamcalls_lab.anomalies); it goes in the next release",
                  DeprecationWarning, stacklevel=2)
    return call_problems(deltas, table).rename(columns={"problem": "anomaly"})


def prefix_table(deltas: pd.DataFrame, turn: str) -> pd.DataFrame:
    """Each text and argument fragment of one turn with what has accumulated so far.

    ``parses`` says whether the argument buffer so far is a strict JSON document: a text
    prefix is always something to show, an argument prefix almost never is.
    """
    rows = with_call_numbers(deltas[deltas["turn"] == turn])
    rows = rows[rows["kind"].isin(FRAGMENT_KINDS)]
    buffers: dict[object, str] = {}
    so_far, parses = [], []
    choices = rows["choice"] if "choice" in rows else [None] * len(rows)
    for kind, choice, block, call, fragment in zip(
        rows["kind"], choices, rows["block"], rows["call"], rows["fragment"], strict=True
    ):
        # one buffer for each choice's text, and one for each call
        choice = present(choice)
        key = ("text", choice) if kind == "text_delta" else (choice, block, call)
        text = buffers.get(key, "") + (present(fragment) or "")
        buffers[key] = text
        so_far.append(len(text))
        parses.append(pd.NA if kind == "text_delta" else strict_parses(text))
    out = rows[["seq", "kind", "block", "fragment", "chars"]].copy()
    out["kind"] = out["kind"].astype("str")
    out["so_far"] = pd.array(so_far, dtype="int64")
    out["parses"] = pd.array(parses, dtype="boolean")
    return out.reset_index(drop=True)


def pick_turn(
    deltas: pd.DataFrame,
    provider: str | None = None,
    min_calls: int = 1,
    min_fragments: int = 3,
    require_call: bool = True,
) -> str:
    """A turn that shows the whole anatomy: text, then calls cut into several fragments.

    Among the turns without error rows that have text, at least ``min_calls`` calls and
    ``min_fragments`` non-empty argument fragments, the one with the fewest events, so it
    fits on a screen. Failing that, a clean turn with a fragment, then one with a call and
    error rows; with ``require_call=False``, then any turn (the most events, errors aside),
    so a notebook opened on a folder with no call in it still shows something.
    """
    rows = deltas if provider is None else deltas[deltas["provider"] == provider]
    kinds = rows.groupby("turn")["kind"]
    has_text = kinds.apply(lambda k: bool((k == "text_delta").any()))
    n_calls = kinds.apply(lambda k: int((k == "call_start").sum()))
    args = rows[(rows["kind"] == "args_delta") & (rows["chars"].fillna(0) > 0)]
    n_frags = args.groupby("turn").size().reindex(n_calls.index, fill_value=0)
    clean = ~kinds.apply(lambda k: bool((k == "error").any()))
    size = kinds.size()
    ok = clean & has_text & (n_frags >= min_fragments) & (n_calls >= min_calls)
    if not ok.any():
        ok = clean & (n_frags > 0) & (n_calls >= min_calls)
    if not ok.any():
        ok = n_calls >= max(min_calls, 1)
    if not ok.any():
        if require_call and len(size):
            raise ValueError("no turn with a tool call in these captures")
        if not len(size):
            raise ValueError("no turns in these captures")
        useful = kinds.apply(lambda k: int((k != "error").sum()))
        return str(useful.sort_values(ascending=False, kind="stable").index[0])
    return str(size[ok].sort_values(kind="stable").index[0])


def padding(body: bytes) -> pd.Series:
    """How many spaces stand before the closing brace of each ``data:`` line, counted.

    Anthropic pads most data lines with a few spaces inside the JSON, after its last value:
    legal JSON whitespace, so a reader never sees it, but it changes the frame's length on
    the wire. Index: the padding width; values: how many lines had it.
    """
    widths = []
    for line in body.splitlines():
        if line.startswith(b"data:") and line.endswith(b"}"):
            inner = line[:-1]
            widths.append(len(inner) - len(inner.rstrip(b" ")))
    counts = pd.Series(widths, dtype="int64").value_counts().sort_index()
    counts.index.name = "spaces"
    return counts.rename("data_lines")


def _calls_word(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def group_name(label: object) -> str:
    """A ``by`` group's label as text: ``openai-chat``, ``openai-chat · api.groq.com · ...``."""
    return " · ".join(str(x) for x in label) if isinstance(label, tuple) else str(label)


def describe_comparison(
    comparison: pd.DataFrame, chapter: ChapterFigures = CHAPTER
) -> list[str]:
    """One plain sentence per provider (or ``by`` group) saying where its figures and the
    chapter's differ.

    Every clause comes from ``comparison``: a group that sent its calls whole is said to,
    over the lengths its calls cover and no further; too few calls are named as too few,
    and a prediction past the longest call is called an extrapolation.
    """
    from .display import number  # numbers read as the tables beside them write them

    c = chapter
    lines = []
    for label, row in comparison.iterrows():
        name = group_name(label)
        n = int(row["calls"])
        delivered = row.get("delivery", "streamed")
        if delivered == "whole":
            low = row.get("shortest", np.nan)
            span = (f"{low:.0f} to {row['longest']:.0f} characters" if pd.notna(low)
                    else f"at most {row['longest']:.0f} characters")
            every = "its one finished call" if n == 1 else f"each of its {n} finished calls"
            lines.append(
                f"{name}: sent {every} whole, in one fragment ({span}), so it has no "
                f"fragment size to fit: there a call takes 1 delta. That holds for calls of "
                f"up to {row['longest']:.0f} characters; these captures say nothing about "
                f"longer ones, so the chapter's {c.long_chars}-character call is beyond them.")
            continue
        if delivered == "too few":
            lines.append(f"{name}: only {_calls_word(n)} finished, too few to fit a line.")
            continue
        ratio = row["ratio"]
        if 0.8 <= ratio <= 1.25:
            verdict = f"close to the chapter's {c.chars_per_delta:g}"
        else:
            side = "smaller" if ratio < 1 else "larger"
            verdict = f"{number(ratio)} times the chapter's {c.chars_per_delta:g} ({side})"
        short = row[f"deltas_at_{c.short_chars}"]
        long = row[f"deltas_at_{c.long_chars}"]
        line = (
            f"{name}: {number(row['chars_per_delta'])} characters per delta over "
            f"{_calls_word(n)}, {verdict}. At that rate a {c.short_chars}-character "
            f"call takes about {short:.0f} deltas (chapter: {c.short_deltas}) and a "
            f"{c.long_chars}-character call about {long:.0f} (chapter: {c.long_deltas})."
        )
        longest = row.get("longest", np.nan)
        if pd.notna(longest) and longest < c.long_chars:
            line += (f" Its longest call has {longest:.0f} characters, so the second figure "
                     "is an extrapolation.")
        r2, rest = row.get("r2", np.nan), row.get("r2_without_longest", np.nan)
        if pd.notna(r2) and pd.notna(rest):
            line += (f" The line's r² is {number(r2)}; without its longest call, "
                     f"{number(rest)}.")
        lines.append(line)
    return lines


def inventory(deltas: pd.DataFrame, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """What a directory holds, per provider: turns, events, calls, and how many are sound."""
    table = _calls_of(deltas, table)
    events = deltas.groupby("provider", observed=True).agg(
        turns=("turn", "nunique"), events=("seq", "size"),
        errors=("kind", lambda k: int((k == "error").sum())))
    per_call = table.groupby("provider", observed=True).agg(
        calls=("args", "size"), complete=("complete", "sum"), valid_json=("valid_json", "sum"),
        median_chars=("chars", "median"))
    out = events.join(per_call).fillna({"calls": 0, "complete": 0, "valid_json": 0})
    out.index = out.index.astype("str")
    return out.astype({"calls": "int64", "complete": "int64", "valid_json": "int64"})


def tool_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per tool: how often it was called, its argument lengths and deltas, most called first."""
    out = table.groupby("tool", dropna=False).agg(
        calls=("args", "size"), median_chars=("chars", "median"), max_chars=("chars", "max"),
        median_deltas=("n_deltas", "median"), incomplete=("complete", lambda c: int((~c).sum())))
    return out.sort_values(["calls", "max_chars"], ascending=False, kind="stable")
