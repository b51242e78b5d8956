"""Judging one run: what went wrong, put down to one class each, and the report.

What a client did is described as :class:`~streamcalls_lab.faults.Symptom` records, the
same as ``check_handler`` builds, and each is put down to a class by the specs in
:mod:`streamcalls_lab.faults`: the rules are theirs, not this module's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from ..accumulate import present
from ..calls import calls
from ..check import report_frame
from ..faults import CLASSES as CLASSES  # what a failure is put down to, in report order
from ..faults import Seen, Sent, classify, cover, describe, json_value, symptoms
from .cases import WireCase
from .run import Run


# -- judging -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    case: WireCase
    cls: str
    expected: str
    got: str
    detail: str


def _got(run: Run) -> tuple[list[Seen], bool]:
    """The calls printed, and whether they are compared as parsed values (``input``)."""
    parsed = bool(run.calls) and all("args" not in c and "input" in c for c in run.calls)
    return [(c.get("call_id"), c.get("tool"), c.get("input") if parsed else c.get("args"))
            for c in run.calls], parsed


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


@lru_cache(maxsize=1024)  # a suite judges each body once per client
def _sent(body: bytes) -> tuple[Sent, ...]:
    """Every call the body sends, as the kit's own reader finds it (a cut one too)."""
    table = calls(body, strict=False)
    return tuple(Sent(present(r.call_id), present(r.tool), r.args, present(r.block),
                      present(r.choice)) for r in table.itertuples())


def judge(case: WireCase, run: Run) -> list[Finding]:
    """The failures of one run, each put down to one class (the fewest that explain the
    run, as ``check_handler`` chooses them over a whole suite)."""
    got, parsed = _got(run)
    want = [(i, t, json_value(a) if parsed else a) for i, t, a in case.expected]
    if run.timed_out:
        error = run.stderr
    else:
        error = f"exited {run.returncode}: {_tail(run.stderr)}" if run.returncode else ""
    found = symptoms(sent=_sent(case.body), expected=want, got=got, parsed=parsed,
                     error=error, hung=run.timed_out, ends_early=case.ends_early,
                     escape_cut=case.escape_cut, reads_cut=True)  # a socket cuts anywhere
    out = []
    for cls, mine in cover([(s, classify(s)) for s in found], lambda f: f[1]).items():
        out += [Finding(case, cls, *describe(s)) for s, _ in mine]
    return out


def report(findings: Sequence[Finding], n_cases: int, seconds: float) -> pd.DataFrame:
    """One row per class: the smallest failing example, and how many failures it has."""
    best = []
    for cls in CLASSES:
        mine = [f for f in findings if f.cls == cls]
        if mine:
            best.append((cls, min(mine, key=lambda f: (f.case.size, len(f.case.example))),
                         len(mine)))
    out = report_frame(best)
    out.attrs.update(cases=n_cases, seconds=round(seconds, 2))
    return out


_VERBATIM = frozenset({"example", "expected", "got"})


def _cell(value: object, verbatim: bool) -> str:
    """Verbatim cells as code spans (backslashes shown as sent); ``|`` escaped for tables."""
    text = str(value).replace("\n", " ").replace("|", "\\|")
    return f"`` {text} ``" if verbatim else text


def markdown(table: pd.DataFrame) -> str:
    """A report (or any frame) as a Markdown table: captured text only as code spans."""
    if table.empty:
        return "no failures"
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    code = [c in _VERBATIM for c in table.columns]
    rows = ["| " + " | ".join(_cell(v, c) for v, c in zip(row, code, strict=True)) + " |"
            for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


