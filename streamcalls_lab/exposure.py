"""How often real captures expose a fault: the share of turns a faulty handler gets wrong.

The breaker shows a fault on a turn built to expose it; this measures the risk on turns as
they were recorded. Each turn's events are fed to the correct
:class:`~streamcalls_lab.accumulate.Accumulator` and to the faulty one, and what each hands
on at ``finish()`` is compared two ways:

- ``text_changed``: some call's argument string differs (or the handler raised), so a
  client that stores or forwards the text byte for byte is wrong;
- ``value_changed``: some call's parsed value differs, or it no longer parses, so even a
  client that parses first is wrong (``{"a":1}`` for ``{"a": 1}`` changes the text only).

Events are fed, not bytes: a fault of the byte layer (``decode_chunks``) never shows here;
``breaker.catches`` feeds recorded reads for that.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .accumulate import Accumulator, turn_records
from .faults import FAULTS

EXPOSURE_COLUMNS = ("turn", "provider", "calls", "text_changed", "value_changed")
SUMMARY_COLUMNS = ("captures", "with_calls", "text_changed", "value_changed", "share_text",
                   "share_value", "share_value_of_calls")


def _value(args: Any) -> Any:
    text = "" if args is None else str(args)
    try:
        return ("json", json.loads(text))
    except ValueError:
        return ("text", text)


def _handed_on(cls: type[Accumulator], events: Sequence[dict[str, Any]]
               ) -> list[tuple[Any, ...]] | None:
    handler = cls()
    try:
        for event in events:
            handler.feed(event)
        calls = handler.finish()
    except Exception:  # a faulty handler raising is one way of being wrong
        return None
    return [(c.get("choice"), c.get("block"), c.get("tool"), c.get("args")) for c in calls]


def fault_exposure(deltas: pd.DataFrame, fault: str = "trim") -> pd.DataFrame:
    """One row per turn of a ``load()`` table: how many calls the correct handler hands on,
    and whether the ``fault`` (a ``FAULTS`` name) changes a call's text or its value."""
    if fault not in FAULTS:
        raise ValueError(f"no fault named {fault!r} (known: {', '.join(FAULTS)})")
    rows = []
    for turn, provider, events in turn_records(deltas):
        want = _handed_on(Accumulator, events) or []
        got = _handed_on(FAULTS[fault], events)
        text = got is None or got != want
        value = got is None or [(*c[:3], _value(c[3])) for c in got] != [
            (*c[:3], _value(c[3])) for c in want]
        rows.append((turn, provider, len(want), text, value))
    out = pd.DataFrame(rows, columns=list(EXPOSURE_COLUMNS))
    return out.astype({"turn": "str", "provider": "str", "calls": "int64",
                       "text_changed": "bool", "value_changed": "bool"})


def exposure_summary(exposure: pd.DataFrame, by: str | Sequence[str] = "provider"
                     ) -> pd.DataFrame:
    """Per provider (or ``by`` group): captures, those with a finished call, how many the
    fault changes in text and in value, and the shares: of all captures (``share_text``,
    ``share_value``) and of those with a call (``share_value_of_calls``)."""
    keys = [by] if isinstance(by, str) else list(by)
    g = exposure.groupby(keys, observed=True, dropna=False)
    out = pd.DataFrame({"captures": g.size(), "with_calls": g["calls"].apply(
        lambda c: int((c > 0).sum())), "text_changed": g["text_changed"].sum(),
        "value_changed": g["value_changed"].sum()})
    out["share_text"] = out["text_changed"] / out["captures"]
    out["share_value"] = out["value_changed"] / out["captures"]
    out["share_value_of_calls"] = out["value_changed"] / out["with_calls"].where(
        out["with_calls"] > 0)
    return out[list(SUMMARY_COLUMNS)].astype({"captures": "int64", "with_calls": "int64",
                                              "text_changed": "int64",
                                              "value_changed": "int64"})
