"""token_boundaries: the share of fragment boundaries that fall on an o200k token boundary."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import stats
from streamcalls_lab import token_boundaries as tb
from streamcalls_lab.producers import served_by

from .support import turns

ARGS = '{"city": "Paris", "days": 3}'  # o200k: {" city ": ␣" Paris ", ␣" days ": ␣ 3 }


def test_token_offsets_are_where_one_o200k_token_ends_and_the_next_begins() -> None:
    assert tb.token_offsets(ARGS) == {2, 6, 8, 10, 15, 17, 19, 23, 25, 26, 27}


def test_a_token_ending_inside_a_character_counts_at_the_characters_end() -> None:
    text = '{"name": "café 👍"}'
    assert all(text[:k].encode().decode() for k in tb.token_offsets(text))
    assert len(text) not in tb.token_offsets(text)


def test_fragments_cut_at_tokens_are_all_on_a_token_boundary() -> None:
    assert tb.on_token(['{"', "city", '":', ' "Paris', '", "days": 3}']) == (4, 4)


def test_fragments_cut_inside_tokens_are_counted_off_a_boundary() -> None:
    assert tb.on_token(['{"ci', 'ty": "Par', 'is", "days": 3}']) == (0, 2)


def test_a_call_in_one_fragment_has_no_boundary_to_count() -> None:
    assert tb.on_token([ARGS]) == (0, 0) and tb.on_token(["", ARGS]) == (0, 0)


def test_alignment_counts_finished_multi_fragment_calls_per_provider() -> None:
    deltas = pd.concat([
        scl.load(turns.anthropic([], [("f", ['{"ci', 'ty": "Paris", "days": 3}'])]), name="a"),
        scl.load(turns.chat([(0, "call_1", "f", ['{"', "city", '": "Paris", "days": 3}'])]),
                 name="c"),
        scl.load(turns.anthropic([], [("f", ['{"', "city"])], stop_calls=False), name="cut"),
        scl.load(turns.anthropic([], [("f", [ARGS])]), name="whole"),
    ], ignore_index=True)
    summary = tb.alignment_summary(tb.token_alignment(deltas))
    assert summary.loc["anthropic-messages", ["calls", "boundaries", "on_token"]].tolist() == [
        1, 1, 0]
    assert summary.loc["openai-chat", "share_on_token"] == 1.0


def test_on_the_real_captures_openai_cuts_on_o200k_tokens_and_claude_elsewhere(
        captures: Path) -> None:
    deltas = scl.load(captures, strict=False)
    alignment = stats.with_server(tb.token_alignment(deltas), served_by(captures))
    share = tb.alignment_summary(alignment, ["provider", "host"])["share_on_token"]
    assert share["openai-chat", "api.openai.com"] > 0.85
    assert share["openai-responses", "api.openai.com"] > 0.9
    assert share["anthropic-messages", "api.anthropic.com"] < 0.4


@pytest.mark.parametrize("by", ["provider", ["provider", "tool"]])
def test_an_empty_table_summarises_to_no_rows(by: str | list[str]) -> None:
    empty = tb.token_alignment(scl.load(turns.anthropic(["Hi"]), name="t"))
    assert empty.empty and tb.alignment_summary(empty, by).empty
