"""plots: each figure draws what stats computed, into the axes it was given, and shows nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import streamcalls_lab as scl
from streamcalls_lab import plots, stats

from .support import turns


@pytest.fixture(autouse=True)
def no_show(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The library must never call plt.show(); figures are closed after each test."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("plt.show() called by the library")

    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def deltas() -> pd.DataFrame:
    return pd.concat([
        scl.load(turns.anthropic(["Hi"], [("f", ['{"ab', 'cd":', ' 1}'])]), name="a"),
        scl.load(turns.anthropic([], [("f", ['{"x":', ' "yz', 'uvwxy', '"}'])]), name="b"),
        scl.load(turns.chat([(0, "call_1", "g", ['{"', "ab", '":', "1}"])]), name="c"),
    ], ignore_index=True)


def legend_texts(ax: plt.Axes) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_fragment_sizes_draws_one_curve_per_provider_with_its_median(deltas) -> None:
    ax = plots.fragment_sizes(deltas)
    labels = legend_texts(ax)
    assert "anthropic-messages (n=7, median 4)" in labels
    assert "openai-chat (n=4, median 2)" in labels
    assert "chapter: 13" in labels


def test_fragment_sizes_draws_into_the_axes_given(deltas) -> None:
    _, axes = plt.subplots(1, 2)
    assert plots.fragment_sizes(deltas, ax=axes[1], style="hist") is axes[1]
    assert not axes[0].has_data()


def test_fragment_sizes_rejects_an_unknown_style(deltas) -> None:
    with pytest.raises(ValueError, match="style must be"):
        plots.fragment_sizes(deltas, style="violin")


def test_fragment_sizes_says_so_when_there_is_nothing_to_draw() -> None:
    ax = plots.fragment_sizes(scl.load(turns.anthropic(["Hi"]), name="t"))
    assert [t.get_text() for t in ax.texts] == ["no args_delta fragments"]


def _drawn_with_fit(deltas: pd.DataFrame) -> tuple[Any, pd.DataFrame]:
    """deltas_vs_length's axes for the calls in ``deltas``, and the fit the lines should show."""
    table = scl.calls(deltas)
    return plots.deltas_vs_length(table), stats.delta_fit(table)


def _line_of(ax: Any, provider: str) -> Any:
    """The fitted line drawn in ``provider``'s colour."""
    return next(ln for ln in ax.get_lines() if ln.get_color() == plots.color(provider))


def test_deltas_vs_length_draws_the_fitted_slope_of_each_provider(deltas) -> None:
    ax, fit = _drawn_with_fit(deltas)
    line = _line_of(ax, "openai-chat")
    x, y = (np.asarray(v, dtype=float) for v in line.get_data())
    assert y[1] / x[1] == pytest.approx(fit.loc["openai-chat", "slope"])


def test_deltas_vs_length_marks_the_chapters_two_calls(deltas) -> None:
    ax = plots.deltas_vs_length(scl.calls(deltas))
    chapter = ax.collections[-1].get_offsets().tolist()
    assert chapter == [[24, 2], [610, 47]]


def test_escaped_vs_parsed_places_each_call_at_its_two_lengths(deltas) -> None:
    table = scl.calls(deltas)
    ax = plots.escaped_vs_parsed(table)
    points = sorted(map(tuple, np.vstack([c.get_offsets() for c in ax.collections]).tolist()))
    assert points == sorted(zip(table["chars"].astype(float), table["wire_chars"].astype(float),
                                strict=True))


def test_first_argument_times_says_when_no_timing_was_recorded(deltas) -> None:
    ax = plots.first_argument_times(stats.first_argument_times(deltas))
    assert "no timing recorded" in ax.texts[0].get_text()


def test_first_argument_times_labels_both_axes_its_clock_and_its_boxes() -> None:
    times = pd.DataFrame({"provider": ["openai-chat"] * 3, "wait": [0.1, 0.2, 0.4]})
    ax = plots.first_argument_times(times, clock="modelled")
    assert ax.get_xlabel() and ax.get_ylabel()
    assert ax.get_title() == "Time to first argument (modelled clock)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["openai-chat\n(n=3)"]
    assert "median" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_turn_timeline_puts_text_and_each_call_on_named_lanes(deltas) -> None:
    ax = plots.turn_timeline(deltas, "a")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["text / turn", "block 1: f"]


def test_overview_is_one_figure_of_four_panels(deltas) -> None:
    fig = plots.overview(deltas)
    assert len(fig.axes) == 4


def test_every_provider_gets_a_colour_of_its_own() -> None:
    names = [*plots.COLORS, *(f"format-{i}" for i in range(30))]
    colours = [plots.color(n) for n in names]
    assert len(set(colours)) == len(names)
    assert plots.color("format-3") == colours[len(plots.COLORS) + 3]  # stable once given


def test_fitted_lines_stay_within_each_providers_calls(deltas) -> None:
    ax, fit = _drawn_with_fit(deltas)
    for provider in ("anthropic-messages", "openai-chat"):
        line = _line_of(ax, provider)
        xs = np.asarray(line.get_xdata(), dtype=float)
        assert (xs.min(), xs.max()) == (fit.loc[provider, "min_chars"],
                                        fit.loc[provider, "max_chars"])


def test_no_line_is_drawn_for_too_few_calls_or_calls_sent_whole() -> None:
    table = scl.calls(pd.concat([
        scl.load(turns.anthropic([], [("f", ['{"a": 1}'])]), name="w"),
        scl.load(turns.chat([(0, "call_1", "g", ['{"', "ab", '":', "1}"])]), name="c"),
    ], ignore_index=True))
    ax = plots.deltas_vs_length(table, min_calls=2, chapter=None)
    assert ax.get_lines() == []
    labels = ax.get_legend_handles_labels()[1]
    assert "anthropic-messages: sent whole (n=1)" in labels
    assert "openai-chat: n=1, too few to fit" in labels


def test_fragment_sizes_reach_the_largest_fragment() -> None:
    big = '{"q": "' + "x" * 80 + '"}'
    deltas = scl.load(turns.chat([(0, "call_1", "g", ['{"', big[2:]])]), name="c")
    ax = plots.fragment_sizes(deltas, chapter=None)
    assert ax.get_xlim()[1] > len(big) - 2


def test_fragment_sizes_leave_out_and_name_providers_that_send_calls_whole() -> None:
    deltas = pd.concat([
        scl.load(turns.anthropic([], [("f", ['{"a": 1}'])]), name="w"),
        scl.load(turns.chat([(0, "call_1", "g", ['{"', "ab", '":', "1}"])]), name="c"),
    ], ignore_index=True)
    ax = plots.fragment_sizes(deltas)
    assert "left out: anthropic-messages" in ax.get_title()
    assert all("anthropic" not in label for label in ax.get_legend_handles_labels()[1])


def test_a_long_tail_of_fragment_sizes_is_drawn_on_a_log_axis() -> None:
    big = '{"q": "' + "x" * 80 + '"}'
    deltas = scl.load(turns.chat([(0, "call_1", "g", ['{"', big[2:]])]), name="c")
    assert plots.fragment_sizes(deltas).get_xscale() == "log"
    short = scl.load(turns.chat([(0, "call_1", "g", ['{"', "ab", '":', "1}"])]), name="c")
    assert plots.fragment_sizes(short).get_xscale() == "linear"
