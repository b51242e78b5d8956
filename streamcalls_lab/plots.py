"""Figures over :mod:`streamcalls_lab.stats`: each returns its Axes (or Figure), never shows it.

Pass ``ax`` to draw into a grid of your own; without it a new figure is made. Colours are
fixed per provider so every figure of a notebook reads the same way: the known formats have
their own, and any other provider gets the next unused colour of a qualitative palette the
first time it is drawn, so no two providers share one.
"""

from __future__ import annotations

from typing import Any

import matplotlib
import matplotlib.lines
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from . import stats
from ._calls import calls as _calls

COLORS = {
    "anthropic-messages": "#c15f3c",
    "openai-chat": "#10a37f",
    "openai-responses": "#1f5fbf",
    "gemini": "#8e44ad",
    "bedrock-converse": "#e6a100",
}
# tab20 then tab20b: 40 qualitative colours for providers without one of their own
_PALETTE = [matplotlib.colors.to_hex(c) for name in ("tab20", "tab20b")
            for c in matplotlib.colormaps[name].colors]
_ASSIGNED: dict[str, str] = {}
LOG_FROM = 50
"""Fragment-size axes reaching past this many characters are drawn on a log scale."""
KIND_MARKERS = {
    "text_start": ("|", "#888888"),
    "text_delta": ("o", "#7f7f7f"),
    "call_start": ("D", "#1f5fbf"),
    "args_delta": ("s", "#c15f3c"),
    "args_done": ("*", "#2ca02c"),
    "block_stop": ("X", "#2ca02c"),
    "turn_stop": ("P", "#000000"),
    "other": (".", "#bbbbbb"),
    "error": ("x", "#d62728"),
}


def color(provider: str) -> str:
    """The provider's colour: its own, or the next palette colour no provider uses yet."""
    name = str(provider)
    if name in COLORS:
        return COLORS[name]
    if name not in _ASSIGNED:
        taken = set(COLORS.values()) | set(_ASSIGNED.values())
        free = [c for c in _PALETTE if c not in taken]
        _ASSIGNED[name] = free[0] if free else _PALETTE[len(_ASSIGNED) % len(_PALETTE)]
    return _ASSIGNED[name]


def _axes(ax: Axes | None, size: tuple[float, float] = (6.4, 4.0)) -> Axes:
    if ax is not None:
        return ax
    _, new = plt.subplots(figsize=size, layout="constrained")
    return new


def _no_data(ax: Axes, what: str) -> Axes:
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, color="#666666")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def _finish(ax: Axes, *, legend: bool = True, **labels: str) -> Axes:
    """``ax`` with its ``xlabel``/``ylabel``/``title`` set and, if asked, a small legend."""
    ax.set(**labels)
    if legend:
        ax.legend(fontsize=8)
    return ax


_GUIDE: dict[str, Any] = {"color": "#000000", "ls": ":", "lw": 1}
"""How a reference line (the chapter's figure, no escapes) is drawn, apart from the data."""


def _left_out(whole: list[str]) -> str:
    return f"\n(sent calls whole, left out: {', '.join(whole)})" if whole else ""


def fragment_sizes(
    deltas: pd.DataFrame,
    kind: str = "args_delta",
    ax: Axes | None = None,
    style: str = "ecdf",
    max_chars: int | None = None,
    chapter: float | None = stats.CHAPTER.chars_per_delta,
) -> Axes:
    """The distribution of fragment sizes per provider (``ecdf`` or ``hist``).

    A dashed line marks each provider's median; a dotted one the chapter's average. The
    axis reaches the largest fragment unless ``max_chars`` cuts it (the histogram then
    piles larger ones into its last bin), on a log scale past ``LOG_FROM`` characters.
    Argument fragments of providers that send each call whole are whole calls, not cuts:
    they are left out and named in the title.
    """
    ax = _axes(ax)
    frags = stats.fragments(deltas, kind)
    whole = stats.sent_whole(_calls(deltas)) if kind == "args_delta" else []
    frags = frags[~frags["provider"].astype("str").isin(whole)]
    if frags.empty:
        return _no_data(ax, f"no {kind} fragments" + _left_out(whole))
    if max_chars is None:
        max_chars = int(frags["chars"].max())
    for provider, group in frags.groupby("provider", observed=True):
        sizes = np.sort(group["chars"].to_numpy(dtype="float64"))
        label = f"{provider} (n={len(sizes)}, median {np.median(sizes):g})"
        if style == "ecdf":
            ax.step(sizes, np.arange(1, len(sizes) + 1) / len(sizes), where="post",
                    color=color(provider), label=label)
            ax.set_ylabel("share of fragments at or below")
        elif style == "hist":
            bins = np.arange(0.5, max_chars + 1.5)
            ax.hist(np.minimum(sizes, max_chars), bins=bins, density=True, histtype="step",
                    color=color(provider), label=label)
            ax.set_ylabel("share of fragments")
        else:
            raise ValueError(f"style must be 'ecdf' or 'hist', not {style!r}")
        ax.axvline(float(np.median(sizes)), color=color(provider), ls="--", lw=0.8)
    if chapter is not None:
        ax.axvline(chapter, **_GUIDE, label=f"chapter: {chapter:g}")
    if max_chars > LOG_FROM:  # a long tail on a linear axis squeezes the bulk into a corner
        ax.set_xscale("log")
        ax.set_xlim(0.8, max_chars * 1.2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_xlim(0, max_chars + 1)
    ax.set_title("Fragment size by provider" + _left_out(whole), fontsize=10)
    return _finish(ax, xlabel=f"characters per {kind} fragment")


def deltas_vs_length(
    table: pd.DataFrame,
    ax: Axes | None = None,
    length: str = "chars",
    chapter: stats.ChapterFigures | None = stats.CHAPTER,
    min_calls: int = 1,
) -> Axes:
    """Deltas per call against argument length, with each provider's fitted line.

    A line is drawn only over the lengths its provider's calls cover, and only where
    :func:`stats.delta_fit` fitted one (``min_calls`` or more calls, not sent whole); the
    legend gives each provider's number of calls. Providers that send calls whole are
    drawn as hollow dots at one delta. The chapter's two calls (24 characters in 2 deltas,
    610 in 47) are black crosses, so the distance between its figures and the data shows.
    """
    ax = _axes(ax)
    fit = stats.delta_fit(table, length, min_calls=min_calls)
    done = table[table["complete"] & (table["n_deltas"] > 0)]
    if done.empty:
        return _no_data(ax, "no finished calls with argument fragments")
    for provider, group in done.groupby("provider", observed=True):
        row = fit.loc[str(provider)]
        n = len(group)
        if provider in stats.sent_whole(table):
            ax.scatter(group[length], group["n_deltas"], s=18, facecolors="none",
                       edgecolors=color(provider), label=f"{provider}: sent whole (n={n})")
            continue
        label = (f"{provider}: {row['chars_per_delta']:.1f} chars/delta (n={n})"
                 if row["fitted"] else f"{provider}: n={n}, too few to fit")
        ax.scatter(group[length], group["n_deltas"], s=12, alpha=0.6, color=color(provider),
                   label=label)
        if row["fitted"]:
            lo, hi = float(row["min_chars"]), float(row["max_chars"])
            ax.plot([lo, hi], [row["slope"] * lo, row["slope"] * hi], color=color(provider),
                    lw=1)
    if chapter is not None:
        xs = [chapter.short_chars, chapter.long_chars]
        ys = [chapter.short_deltas, chapter.long_deltas]
        ax.plot(xs, [x / chapter.chars_per_delta for x in xs], **_GUIDE)
        ax.scatter(xs, ys, marker="x", s=60, color="#000000", zorder=3, label="chapter's calls")
    return _finish(ax, xlabel=f"argument length ({length})", ylabel="argument deltas",
                   title="Deltas against argument length")


def escaped_vs_parsed(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Escaped length on the wire against the argument string's length, one dot per call."""
    ax = _axes(ax)
    if table.empty:
        return _no_data(ax, "no calls")
    for provider, group in table.groupby("provider", observed=True):
        ax.scatter(group["chars"], group["wire_chars"], s=12, alpha=0.6,
                   color=color(provider), label=str(provider))
    top = float(max(table["chars"].max(), table["wire_chars"].max(), 1))
    ax.plot([0, top], [0, top], **_GUIDE, label="no escapes")
    return _finish(ax, xlabel="argument string (chars)", ylabel="as sent, escaped (wire_chars)",
                   title="The wire form is longer")


def first_argument_times(times: pd.DataFrame, ax: Axes | None = None,
                         clock: str | None = None) -> Axes:
    """Seconds from each call's announcement to its first argument fragment, per provider.

    ``clock`` says whose clock the times are (``"modelled"`` for the generator's timing
    model, ``"recorded"``); the title says it, so a modelled wait is never read as measured.
    Each tick names its provider and how many calls it has; the legend reads the boxes.
    """
    ax = _axes(ax)
    timed = times.dropna(subset=["wait"])
    if timed.empty:
        return _no_data(ax, "no timing recorded (no .timing.tsv sidecars)")
    groups = list(timed.groupby("provider", observed=True))
    parts = ax.boxplot([g["wait"].to_numpy() for _, g in groups],
                       tick_labels=[f"{p}\n(n={len(g)})" for p, g in groups],
                       patch_artist=False)
    for box, (provider, _) in zip(parts["boxes"], groups, strict=True):
        box.set_color(color(str(provider)))
    handles = [
        matplotlib.lines.Line2D([], [], color=parts["medians"][0].get_color(), label="median"),
        matplotlib.lines.Line2D([], [], color="#444444", label="box: middle half of calls"),
        matplotlib.lines.Line2D([], [], color="#444444", ls="-", marker="_",
                                label="whiskers: within 1.5 box heights"),
        matplotlib.lines.Line2D([], [], color="#444444", ls="none", marker="o",
                                markerfacecolor="none", label="a call beyond them"),
    ]
    ax.legend(handles=handles, fontsize=8)
    which = f" ({clock} clock)" if clock else ""
    return _finish(ax, legend=False, xlabel="wire format (calls with a first argument)",
                   ylabel="announcement → first argument (s)",
                   title=f"Time to first argument{which}")


def turn_timeline(deltas: pd.DataFrame, turn: str, ax: Axes | None = None) -> Axes:
    """One turn's events on lanes (text, then one lane per call), in wire order.

    Marker size follows the fragment's length; the x axis is seconds when the turn has
    timing, otherwise the event number.
    """
    ax = _axes(ax, (8.0, 3.0))
    rows = stats.with_call_numbers(deltas[deltas["turn"] == turn])
    if rows.empty:
        return _no_data(ax, f"no turn {turn!r}")
    timed = bool(rows["t"].notna().all())
    x = rows["t"] if timed else rows["seq"]
    lanes: dict[object, int] = {}
    names: dict[object, str] = {}
    lane = []
    for kind, block, call, tool in zip(
        rows["kind"], rows["block"], rows["call"], rows["tool"], strict=True
    ):
        if kind in ("text_start", "text_delta") or pd.isna(block) or call == 0:
            key: object = "text / turn"
        else:
            key = (int(block), int(call))
        if key not in lanes:
            lanes[key] = len(lanes)
        lane.append(lanes[key])
        if isinstance(tool, str) and key not in names:
            names[key] = tool
    y = np.array(lane)
    sizes = 12 + 3 * np.minimum(rows["chars"].fillna(0).to_numpy(dtype="float64"), 30)
    for kind, (marker, colour) in KIND_MARKERS.items():
        mask = (rows["kind"] == kind).to_numpy()
        if mask.any():
            ax.scatter(np.asarray(x)[mask], y[mask], marker=marker, s=sizes[mask],
                       color=colour, label=kind)
    labels = [
        key if isinstance(key, str) else f"block {key[0]}: {names.get(key, '?')}" for key in lanes
    ]
    ax.set_yticks(range(len(lanes)), labels)
    ax.set_ylim(-0.6, len(lanes) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since first byte" if timed else "event number (seq)")
    ax.set_title(f"Events of {turn.rsplit('/', 1)[-1][:80]}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def overview(deltas: pd.DataFrame, table: pd.DataFrame | None = None) -> Figure:
    """Four panels for a first look at a directory: sizes, counts, escapes, timing."""
    table = _calls(deltas) if table is None else table
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), layout="constrained")
    fragment_sizes(deltas, ax=axes[0, 0])
    deltas_vs_length(table, ax=axes[0, 1])
    escaped_vs_parsed(table, ax=axes[1, 0])
    first_argument_times(stats.first_argument_times(deltas), ax=axes[1, 1])
    return fig
