"""Notebook 4's reveals and exercise: when each variant goes wrong, and which stay wrong.

Everything is read off a :class:`~streamcalls_lab.stepper.Stepper`'s history, so the
answers are what the stepper shows, on whichever capture it is given.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import corpus
from ..stepper import Stepper, history
from .chapter import in_order
from .checking import Exercise, Verdict, exercise

CUT_OFF = Path("anthropic-messages") / "cut-off-mid-args.sse"
"""The bundled turn the exercise steps through: it ends inside a call's arguments."""


def _history(stepper: Stepper) -> pd.DataFrame:
    return history(stepper, len(stepper) - 1) if len(stepper) else pd.DataFrame(
        columns=["variant", "first_step", "first_reason", "now"])


def first_to_go_wrong(stepper: Stepper, among: Iterable[str] | None = None
                      ) -> tuple[int | None, list[str]]:
    """The first step at which any variant (of ``among``, default all) disagrees with the
    correct handler, and every such variant that does at that step (None and [] when none
    ever does). A prediction asked over some variants is answered over those alone."""
    h = _history(stepper).dropna(subset=["first_step"])
    if among is not None:
        h = h[h["variant"].isin(list(among))]
    if h.empty:
        return None, []
    first = int(h["first_step"].min())
    return first, sorted(h.loc[h["first_step"] == first, "variant"])


def wrong_then_right(stepper: Stepper, among: Iterable[str] | None = None) -> list[str]:
    """The variants (of ``among``, default all) that disagree at some step and agree again
    at the last event."""
    h = _history(stepper)
    if among is not None:
        h = h[h["variant"].isin(list(among))]
    return sorted(h.loc[h["first_step"].notna() & (h["now"] == ""), "variant"])


def still_wrong(stepper: Stepper) -> list[str]:
    """The variants that disagree with the correct handler at the last event."""
    h = _history(stepper)
    return sorted(h.loc[h["now"] != "", "variant"])


def cut_off_stepper() -> Stepper:
    """The stepper on the bundled cut-off turn (:data:`CUT_OFF`)."""
    path = corpus.BUNDLED / CUT_OFF
    if not path.is_file():
        raise FileNotFoundError(f"the exercise steps through the bundled {CUT_OFF}, which is "
                                f"not at {path} (an installed wheel has no data/)")
    return Stepper(path)


def _still_wrong_at_cut_off() -> list[str]:
    return still_wrong(cut_off_stepper())


def _check(answer: Any) -> Verdict:
    if not isinstance(answer, set | frozenset | list | tuple) or not all(
            isinstance(a, str) for a in answer):
        return Verdict(False, "answer with a set of variant names, e.g. {'trim', 'key_by_id'}")
    stepper = cut_off_stepper()
    unknown = sorted(set(answer) - set(stepper.faults))
    if unknown:
        return Verdict(False, f"no variant named {', '.join(map(repr, unknown))}")
    h = _history(stepper).set_index("variant")
    truth = set(still_wrong(stepper))
    missed, extra = sorted(truth - set(answer)), sorted(set(answer) - truth)
    if not missed and not extra:
        return Verdict(True, f"these {len(truth)} disagree at the last event; every other "
                             "variant agrees there, whatever it did on the way.")
    parts = [f"{v} still disagrees at the end ({h.loc[v, 'now']})" for v in missed]
    parts += [f"{v} agrees at the end" + (
        f" (it went wrong at step {h.loc[v, 'first_step']} and recovered)"
        if pd.notna(h.loc[v, "first_step"]) else " (it never went wrong here)") for v in extra]
    return Verdict(False, "; ".join(parts))


exercise(Exercise(
    name="04-stepping/cut-off",
    task="Step the bundled cut-off-mid-args turn (anthropic-messages) to its last event: "
         "which variants disagree with the correct handler there? Answer a set of names.",
    checker=_check,
    solution=_still_wrong_at_cut_off,
    explanation=(
        "Run view = StepperView(DATA / 'anthropic-messages' / 'cut-off-mid-args.sse'), step "
        "to the end and read the variants' column; or compute it: "
        "stepping.still_wrong(scl.Stepper(path)), which reads history(stepper, last)['now']. "
        "The stream stops inside a call's arguments, so no stop ever arrives: the correct "
        "handler hands nothing on. lenient_parse handed the call on as soon as a prefix "
        "read as a value; trim changed the buffer's text (a space at a fragment's edge) and "
        "decode_each raised on an escape cut in two; key_by_id filed the fragments under no "
        "id; markdown_bubble put them on the message surface and read them back changed. "
        "The stepper shows the state after each event; what a handler does "
        "when the connection closes (eof_as_stop hands on what it holds) comes after the "
        "last event, so it does not show here; notebook 3's parse_to_finish scene shows it."),
    wrong=({"lenient_parse"}, set(), ["eof_as_stop"], {"no_such_variant"}),
))


def first_divergence_of(stepper: Stepper, variant: str) -> tuple[int, str] | None:
    """The first step at which ``variant`` disagrees, and why (None if it never does)."""
    h = _history(stepper).set_index("variant")
    if variant not in h.index or pd.isna(h.loc[variant, "first_step"]):
        return None
    return int(h.loc[variant, "first_step"]), str(h.loc[variant, "first_reason"])


def chapter_first(table: pd.DataFrame, servers: bool = False) -> pd.DataFrame:
    """A history table (``stepper.history``) with the chapter's variants first; without
    ``servers`` the server-side ones are left out and named in ``attrs["hidden"]``, those
    of them that went wrong in ``attrs["hidden_wrong"]``."""
    names = list(table["variant"])
    keep = in_order(names, servers)
    keep += [n for n in names if n not in keep and n not in in_order(names, True)]
    rows = table.set_index("variant", drop=False)
    hidden = [n for n in names if n not in keep]
    out = rows.loc[keep].reset_index(drop=True)
    out.attrs["hidden"] = hidden
    out.attrs["hidden_wrong"] = [n for n in hidden if pd.notna(rows.at[n, "first_step"])]
    return out
