"""Prefix analysis: when a proper prefix parses, and when a lenient parser shows a wrong value."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import prefixes
from streamcalls_lab.check import Call, turn_bytes
from streamcalls_lab.prefixes import (
    contradicts,
    prefix_parses,
    prefix_summary,
    strict_parses,
    top_type,
    where_it_bites,
)


def _turn(*calls: tuple[str, tuple[str, ...]], cut: bool = False) -> bytes:
    return turn_bytes("anthropic-messages",
                      [Call(tool, f"toolu_{n}", frags) for n, (tool, frags) in enumerate(calls)],
                      cut=cut)


@pytest.mark.parametrize(("args", "kind"), [
    ('{"a": 1}', "object"), ("[1]", "array"), ('"x"', "string"), ("20", "number"),
    ("true", "boolean"), ("null", "null"), ('{"a": ', "invalid"), ("  ", "empty"),
])
def test_top_type_names_the_whole_value(args: str, kind: str) -> None:
    assert top_type(args) == kind


def test_no_proper_prefix_of_an_object_parses() -> None:
    doc = '{"limit": 20, "q": "x y"}'
    assert not any(strict_parses(doc[:k]) for k in range(1, len(doc)))


def test_every_prefix_of_a_number_parses() -> None:
    assert all(strict_parses("1024"[:k]) for k in range(1, 4))


def test_a_shorter_number_contradicts_the_final_one() -> None:
    assert contradicts({"limit": 2}, {"limit": 20})


def test_a_value_with_keys_still_missing_does_not_contradict() -> None:
    assert not contradicts({"limit": 20}, {"limit": 20, "status": "ok"})


def test_counts_at_the_real_fragment_boundaries() -> None:
    row = prefix_parses(_turn(("lookup", ('{"limit": 2', '0, "q": "par', 'is"}')))).iloc[0]
    assert (row.boundaries, row.strict_at_boundaries, row.changes_at_boundaries,
            row.changes_strings_at_boundaries) == (2, 0, 1, 2)


def test_a_number_call_parses_at_its_first_boundary() -> None:
    row = prefix_parses(_turn(("count", ("1", "024")))).iloc[0]
    assert (row.top_type, row.strict_at_boundaries, row.first_strict) == ("number", 1, 1)


def test_a_calls_table_gives_every_cut_but_no_boundaries() -> None:
    table = prefix_parses(scl.calls(_turn(("count", ("1", "024")))))
    assert table.boundaries.isna().all() and table.strict_cuts.iloc[0] == 3


def test_where_it_bites_counts_merged_turns_and_a_cut_after_the_brace() -> None:
    merged = scl.load(_turn(("w", ('{"c": 1}',)), ("w", ('{"c": 2}',))), name="merged")
    cut = scl.load(_turn(("w", ('{"c": 1}',)), cut=True), name="cut")
    bites = where_it_bites(prefix_parses(pd.concat([merged, cut]))).set_index("case")
    assert (bites.loc["merged_calls", "count"], bites.loc["truncated_parses", "count"]) == (1, 1)


def test_summary_sums_by_provider_and_type() -> None:
    table = prefix_parses(_turn(("count", ("1", "024")), ("lookup", ('{"a":', " 1}"))))
    summary = prefix_summary(table).set_index("top_type")
    assert summary.loc["number", "strict_cuts"] == 3 and summary.loc["object", "strict_cuts"] == 0


@pytest.mark.captures
def test_no_real_object_call_has_a_proper_prefix_that_parses(captures: Path) -> None:
    table = prefix_parses(captures / "anthropic-messages")
    objects = table[table.top_type == "object"]
    assert len(objects) > 100 and (objects.strict_cuts == 0).all()


def test_boundary_parses_counts_a_multi_fragment_call_whose_boundary_prefix_parses() -> None:
    # "20" cut after "2": a top-level number parses at that real boundary
    deltas = pd.concat([scl.load(_turn(("f", ("2", "0"))), name="number"),
                        scl.load(_turn(("f", ('{"a": ', "1}"))), name="object"),
                        scl.load(_turn(("f", ('{"a": 1}',))), name="whole")],
                       ignore_index=True)
    counts = prefixes.boundary_parses(prefix_parses(deltas)).loc["anthropic-messages"]
    assert counts["multi_fragment_calls"] == 2 and counts["parse_at_a_boundary"] == 1
    assert counts["finished_calls"] == 3 and counts["parse_at_any_cut"] == 1


def test_no_real_capture_has_an_object_prefix_that_parses_at_a_fragment_boundary(
        captures: Path) -> None:
    counts = prefixes.boundary_parses(prefix_parses(captures))
    assert counts["multi_fragment_calls"].sum() > 500
    assert counts["parse_at_a_boundary"].sum() == 0
