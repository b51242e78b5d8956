"""How often an argument prefix looks finished: the honest numbers behind parse-as-completion.

For each call of a corpus, every proper prefix of its arguments is tried two ways:

- **strict**: ``json.loads`` succeeds, which is what a parse-to-finish handler takes as
  "complete". A proper prefix of a JSON *object* never parses, so for objects this is
  zero unless something else is going on (whitespace after the closing brace, two calls
  in one buffer); for a top-level number, every prefix of its digits parses.
- **lenient**: a partial-JSON parser (jiter) reads the prefix, and the value it yields
  *contradicts* the finished value (``{"limit": 2}`` when the call ends with 20): a value
  handed on at that moment would later change. ``partial_mode="on"`` withholds unfinished
  strings, so what changes there is numbers; ``trailing-strings`` also shows strings as
  they grow.

Prefixes are taken at the real fragment boundaries (what a handler actually sees; needs
the events) and at every character (any split a provider could make).
:func:`where_it_bites` then counts the cases where a strict parse really does misfire.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import jiter
import pandas as pd

from . import _deepjson as deepjson
from .accumulate import turn_calls
from .loader import load
from .sources import Source

PREFIX_COLUMNS = (
    "turn", "provider", "block", "tool", "top_type", "chars", "complete", "valid_json",
    "boundaries", "strict_at_boundaries", "changes_at_boundaries",
    "changes_strings_at_boundaries", "cuts", "strict_cuts", "changes_cuts",
    "changes_strings_cuts", "first_strict",
)
_ENDS = frozenset('}]"0123456789el')  # the last character of any JSON text


def top_type(args: str) -> str:
    """The JSON type of the whole argument string: object, array, ..., or invalid / empty."""
    if not args.strip():
        return "empty"
    try:
        value = deepjson.loads(args)
    except ValueError:
        return "invalid"
    for kind, types in (("object", dict), ("array", list), ("string", str), ("boolean", bool),
                        ("number", (int, float))):
        if isinstance(value, types):
            return kind
    return "null"


def strict_parses(prefix: str) -> bool:
    """``json.loads`` accepts the prefix (tried only when it could: on a closing character)."""
    tail = prefix.rstrip()
    if not tail or tail[-1] not in _ENDS:
        return False
    return deepjson.is_json(prefix)


def _lenient(prefix: str, mode: str) -> Any:
    try:
        return jiter.from_json(prefix.encode("utf-8"), partial_mode=mode)
    except ValueError:
        return _NOTHING


_NOTHING = object()


def contradicts(partial: Any, final: Any) -> bool:
    """A partial value says something the finished value does not (not just less of it)."""
    if isinstance(partial, dict):
        return not isinstance(final, dict) or any(
            k not in final or contradicts(v, final[k]) for k, v in partial.items())
    if isinstance(partial, list):
        return (not isinstance(final, list) or len(partial) > len(final)
                or any(contradicts(a, b) for a, b in zip(partial, final, strict=False)))
    return type(partial) is not type(final) or partial != final


def _changes(prefix: str, final: Any, mode: str) -> bool:
    value = _lenient(prefix, mode)
    return value is not _NOTHING and contradicts(value, final)


def _count(prefixes: Sequence[str], final: Any, valid: bool) -> tuple[int, Any, Any]:
    strict = sum(strict_parses(p) for p in prefixes)
    if not valid:
        return strict, pd.NA, pd.NA
    on = sum(_changes(p, final, "on") for p in prefixes)
    strings = sum(_changes(p, final, "trailing-strings") for p in prefixes)
    return strict, on, strings


def _boundary_prefixes(parts: Sequence[str]) -> list[str]:
    """The buffer after each non-empty fragment but the last."""
    out, so_far = [], ""
    pieces = [p for p in parts if p]
    for piece in pieces[:-1]:
        so_far += piece
        out.append(so_far)
    return out


def _row(turn: Hashable, provider: Hashable, block: Any, tool: Any, args: str,
         complete: bool, parts: Sequence[str] | None) -> dict[str, Any]:
    valid = top_type(args) not in ("invalid", "empty")
    final = deepjson.loads(args) if valid else None
    cuts = [args[:k] for k in range(1, len(args))]
    strict_cuts, changes, changes_strings = _count(cuts, final, valid)
    first = next((k for k in range(1, len(args)) if strict_parses(args[:k])), pd.NA)
    row = {"turn": turn, "provider": provider, "block": block, "tool": tool,
           "top_type": top_type(args), "chars": len(args), "complete": complete,
           "valid_json": valid, "cuts": len(cuts), "strict_cuts": strict_cuts,
           "changes_cuts": changes, "changes_strings_cuts": changes_strings,
           "first_strict": first}
    if parts is None:
        row |= {"boundaries": pd.NA, "strict_at_boundaries": pd.NA,
                "changes_at_boundaries": pd.NA, "changes_strings_at_boundaries": pd.NA}
    else:
        at = _boundary_prefixes(parts)
        strict, changes, changes_strings = _count(at, final, valid)
        row |= {"boundaries": len(at), "strict_at_boundaries": strict,
                "changes_at_boundaries": changes,
                "changes_strings_at_boundaries": changes_strings}
    return row


def prefix_parses(corpus: Source | pd.DataFrame) -> pd.DataFrame:
    """One row per call: how many of its proper prefixes parse strictly or mislead a lenient parser.

    ``corpus`` is a source, a ``load()`` dataframe (fragment boundaries known) or a
    ``calls()`` dataframe (only every-character cuts; the boundary columns are NA).
    """
    if not isinstance(corpus, pd.DataFrame):
        corpus = load(corpus, strict=False)
    rows = []
    if "kind" not in corpus.columns:  # a calls() table
        for r in corpus.itertuples(index=False):
            rows.append(_row(r.turn, r.provider, r.block, r.tool, str(r.args),
                             bool(r.complete), None))
    else:
        for turn, provider, buf in turn_calls(corpus):
            rows.append(_row(turn, provider, buf.block, buf.tool, buf.args,
                             buf.complete, buf.parts))
    table = pd.DataFrame(rows, columns=list(PREFIX_COLUMNS))
    counts = [c for c in PREFIX_COLUMNS if c.endswith(("boundaries", "cuts"))]
    return table.astype({"turn": "str", "provider": "str", "block": "Int64", "tool": "str",
                         "top_type": "str", "chars": "int64", "complete": "bool",
                         "valid_json": "bool", "first_strict": "Int64"}
                        | {c: "Int64" for c in counts})


def prefix_summary(table: pd.DataFrame, by: Sequence[str] = ("provider", "top_type")
                   ) -> pd.DataFrame:
    """Totals of :func:`prefix_parses` by provider and top-level type, with shares."""
    counts = [c for c in PREFIX_COLUMNS if c.endswith(("boundaries", "cuts"))]
    g = table.groupby(list(by), observed=True)
    out = g[counts].sum()
    out.insert(0, "calls", g.size())
    out["calls_strict_at_boundary"] = g["strict_at_boundaries"].apply(lambda s: int((s > 0).sum()))
    out["calls_strict_any_cut"] = g["strict_cuts"].apply(lambda s: int((s > 0).sum()))
    out["share_strict_cuts"] = out["strict_cuts"] / out["cuts"].where(out["cuts"] > 0)
    out["share_changes_cuts"] = out["changes_cuts"] / out["cuts"].where(out["cuts"] > 0)
    out["share_changes_at_boundaries"] = (
        out["changes_at_boundaries"] / out["boundaries"].where(out["boundaries"] > 0))
    return out.reset_index()


def where_it_bites(table: pd.DataFrame) -> pd.DataFrame:
    """The cases where "it parses, so it is finished" really misfires, counted on a corpus.

    One row per case, with how many calls (or turns) show it and how many could:

    - ``non_object_top_level``: a valid call whose whole arguments are not an object; a
      proper prefix parses whenever the value is a number (or, cut after the brace, a
      value followed by whitespace).
    - ``object_proper_prefix``: an object call with a proper prefix that parses at all
      (only trailing whitespace after the closing brace can do it).
    - ``merged_calls``: a turn with two calls to one tool; a buffer keyed by the tool's
      name holds the first call's arguments, which parse, and then never parses again.
    - ``truncated_parses``: a call that never got its stop whose arguments parse, i.e. the
      stream was cut right after the closing brace; parse-to-finish hands it on.
    - ``lenient_changes``: a call where a lenient parser, at a real fragment boundary,
      shows a value that the finished arguments contradict.
    """
    valid = table[table["valid_json"]]
    objects = valid[valid["top_type"] == "object"]
    other = valid[valid["top_type"] != "object"]
    # Two captures in different format folders may share a file name: key turns by both.
    repeats = table.groupby(["provider", "turn", "tool"]).size()
    merged_turns = int((repeats > 1).groupby(level=[0, 1]).any().sum())
    multi_call_turns = int((table.groupby(["provider", "turn"]).size() > 1).sum())
    incomplete = table[~table["complete"]]
    with_bounds = valid[valid["boundaries"].notna()]
    rows = [
        ("non_object_top_level", int((other["strict_cuts"] > 0).sum()), len(other),
         "valid calls whose top-level value is not an object: with a parsing proper prefix"),
        ("object_proper_prefix", int((objects["strict_cuts"] > 0).sum()), len(objects),
         "object calls with any proper prefix that parses strictly"),
        ("merged_calls", merged_turns, multi_call_turns,
         "turns with several calls, two of them to one tool (a name-keyed buffer merges them)"),
        ("truncated_parses", int(incomplete["valid_json"].sum()), len(incomplete),
         "calls without a stop whose arguments parse (cut right after the closing brace)"),
        ("lenient_changes", int((with_bounds["changes_at_boundaries"] > 0).sum()),
         len(with_bounds), "valid calls where a partial parser, at a real fragment boundary, "
         "shows a value the finished call contradicts"),
    ]
    return pd.DataFrame(rows, columns=["case", "count", "out_of", "what"]).astype(
        {"case": "str", "count": "int64", "out_of": "int64", "what": "str"})


BOUNDARY_COLUMNS = ("multi_fragment_calls", "parse_at_a_boundary", "finished_calls",
                    "parse_at_any_cut")


def boundary_parses(table: pd.DataFrame, by: str | Sequence[str] = "provider") -> pd.DataFrame:
    """Per provider (or ``by`` group) of a :func:`prefix_parses` table built from events:
    of the calls that came in two or more fragments, how many had a prefix, cut at one of
    their real fragment boundaries, that parses strictly (``parse_at_a_boundary``); and, of
    the finished calls, how many have such a prefix at any character (``parse_at_any_cut``).
    The first is what a parse-to-finish handler meets; the second what any split could give.
    """
    keys = [by] if isinstance(by, str) else list(by)
    multi = table["boundaries"].fillna(0) > 0
    frame = table.assign(
        _multi=multi, _at=multi & (table["strict_at_boundaries"].fillna(0) > 0),
        _done=table["complete"], _any=table["complete"] & (table["strict_cuts"] > 0))
    g = frame.groupby(keys, observed=True, dropna=False)
    out = pd.DataFrame({"multi_fragment_calls": g["_multi"].sum(),
                        "parse_at_a_boundary": g["_at"].sum(),
                        "finished_calls": g["_done"].sum(),
                        "parse_at_any_cut": g["_any"].sum()})
    return out[list(BOUNDARY_COLUMNS)].astype("int64")
