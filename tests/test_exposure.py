"""exposure: how many recorded turns a fault gets wrong, in text and in value."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import exposure as ex

from .support import turns


def _load(**bodies: bytes) -> pd.DataFrame:
    return pd.concat([scl.load(b, name=n) for n, b in bodies.items()], ignore_index=True)


def test_trim_changes_the_value_when_a_space_inside_a_string_sits_at_a_boundary() -> None:
    deltas = _load(t=turns.anthropic([], [("f", ['{"q": "urgent', ' request"}'])]))
    row = ex.fault_exposure(deltas, "trim").iloc[0]
    assert row["text_changed"] and row["value_changed"] and row["calls"] == 1


def test_trim_changes_only_the_text_when_the_space_is_between_tokens() -> None:
    deltas = _load(t=turns.anthropic([], [("f", ['{"q":', ' 1}'])]))
    row = ex.fault_exposure(deltas, "trim").iloc[0]
    assert row["text_changed"] and not row["value_changed"]


def test_a_turn_without_a_space_at_any_boundary_is_not_exposed() -> None:
    deltas = _load(t=turns.chat([(0, "call_1", "f", ['{"q"', ':"a b"}'])]))
    row = ex.fault_exposure(deltas, "trim").iloc[0]
    assert not row["text_changed"] and not row["value_changed"]


def test_a_handler_that_raises_is_exposed() -> None:
    deltas = _load(t=turns.anthropic([], [("f", ['{"q": "a\\', 'nb"}'])]))
    row = ex.fault_exposure(deltas, "decode_each").iloc[0]
    assert row["text_changed"] and row["value_changed"]


def test_an_unknown_fault_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"no fault named 'tirm'.*trim"):
        ex.fault_exposure(_load(t=turns.anthropic(["Hi"])), "tirm")


def test_the_summary_counts_shares_of_captures_and_of_those_with_a_call() -> None:
    deltas = _load(
        bad=turns.anthropic([], [("f", ['{"q": "a', ' b"}'])]),
        fine=turns.anthropic([], [("f", ['{"q": "a b"}'])]),
        prose=turns.anthropic(["Hello"]),
    )
    row = ex.exposure_summary(ex.fault_exposure(deltas)).loc["anthropic-messages"]
    assert row[["captures", "with_calls", "value_changed"]].tolist() == [3, 2, 1]
    assert row["share_value"] == pytest.approx(1 / 3)
    assert row["share_value_of_calls"] == pytest.approx(1 / 2)


def test_trimming_would_change_many_real_anthropic_captures(captures: Path) -> None:
    summary = ex.exposure_summary(ex.fault_exposure(scl.load(captures, strict=False)))
    assert summary.loc["anthropic-messages", "share_text"] > 0.4
    assert summary.loc["anthropic-messages", "share_value"] > summary.loc[
        "openai-responses", "share_value"] > 0
