"""Judging one run: each failure put down to one class, and the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pandas as pd

from ..check import (
    deleted_only,
    partly_decoded,
    report_frame,
)
from .cases import CallTuple, WireCase
from .run import Run, _parsed

CLASSES = (
    "trim", "decode_each", "decode_chunks", "key_by_name", "key_by_last", "parse_to_finish",
    "lost_on_truncation", "merged_calls", "crash", "other",
)
"""What a failure is put down to, in report order. ``decode_each``: each fragment's escapes
decoded on its own; ``decode_chunks``: each socket read decoded on its own; ``key_by_last``:
fragments go to the call announced last; ``parse_to_finish``: a call handed on before its
stop; ``lost_on_truncation``: finished calls lost because the stream ended early;
``merged_calls``: two calls of different tools run into one; ``crash``: the right calls,
then a non-zero exit on a stream that was not cut."""

# -- judging -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    case: WireCase
    cls: str
    expected: str
    got: str
    detail: str


def _got(run: Run) -> tuple[list[CallTuple], bool]:
    """The calls printed, and whether they are compared as parsed values (``input``)."""
    parsed = bool(run.calls) and all("args" not in c and "input" in c for c in run.calls)
    return [(str(c.get("call_id")), str(c.get("tool")), c.get("input") if parsed
             else c.get("args")) for c in run.calls], parsed


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _key(call: CallTuple) -> str:
    return json.dumps(call, sort_keys=True, default=str)


def judge(case: WireCase, run: Run) -> list[Finding]:
    """The failures of one run, each put down to one class."""
    got, parsed = _got(run)
    want = [(i, t, _parsed(a) if parsed else a) for i, t, a in case.expected]
    how = " (compared as parsed input)" if parsed else ""

    def finding(cls: str, expected: Any, gotten: Any, detail: str) -> Finding:
        return Finding(case, cls, repr(expected), repr(gotten), detail + how)

    if run.timed_out:
        return [finding("other", want, got, run.stderr)]
    exited = f"exited {run.returncode}: {_tail(run.stderr)}" if run.returncode else ""
    if sorted(map(_key, got)) == sorted(map(_key, want)):
        return [finding("crash", want, got, "handed on the right calls, then " + exited)] if (
            exited and not case.ends_early) else []
    if not got and want and exited:
        if "UnicodeDecodeError" in run.stderr:
            return [finding("decode_chunks", want, got, "a read that ends inside a multi-byte "
                            "character was decoded alone: " + exited)]
        if case.escape_cut:
            return [finding("decode_each", want, got, "a fragment that ends inside an escape "
                            "was decoded alone: " + exited)]
        if case.ends_early:
            return [finding("lost_on_truncation", want, got, "finished calls lost when the "
                            "stream stopped early: " + exited)]
        return [finding("crash", want, got, exited)]
    found = []
    texts = [a for _, _, a in got if isinstance(a, str)]
    for (_, t1, a1), (_, t2, a2) in pairwise(want):
        if not parsed and any(x.startswith(a1 + a2) for x in texts):
            merged = "key_by_name" if t1 == t2 and case.family != "index_reuse" else (
                "merged_calls")
            found.append(finding(merged, [a1, a2], next(x for x in texts if x.startswith(a1 + a2)),
                                 "two calls run together in one buffer"))
    if case.mixed and case.mixed in texts:
        found.append(finding("key_by_last", want, got, "fragments of both calls went to the "
                             "call announced last"))
    if found:
        return found
    wanted = {c[0]: c for c in want}
    seen: set[str] = set()
    for call in got:
        call_id, tool, args = call
        if call_id in seen and call == wanted[call_id]:
            found.append(finding("other", want, got, "the same call handed on twice"))
            continue
        if call_id in seen or call_id not in wanted:
            extra = next((s for s in case.sent if (s.startswith(args) if isinstance(args, str)
                                                    else _parsed(s) == args)), None)
            if extra is not None or (case.ends_early and call_id.encode() in case.body):
                found.append(finding("parse_to_finish", "nothing more", call, "handed on a "
                                     "call whose stop never came"))
            else:
                found.append(finding("other", want, got, "a call that was never sent"))
            continue
        seen.add(call_id)
        if call == wanted[call_id]:
            continue
        _, wtool, wargs = wanted[call_id]
        if tool != wtool:
            found.append(finding("other", wanted[call_id], call, "tool name differs"))
        elif parsed or not isinstance(args, str):
            found.append(finding("other", wargs, args, "arguments differ"))
        elif len(args) < len(wargs) and wargs.startswith(args):
            found.append(finding("parse_to_finish", wargs, args, "handed on before its stop"))
        elif deleted_only(wargs, args, str.isspace):
            found.append(finding("trim", wargs, args, "whitespace dropped at a fragment edge"))
        elif partly_decoded(wargs, args):
            found.append(finding("decode_each", wargs, args, "escapes decoded fragment by "
                                 "fragment"))
        else:
            found.append(finding("other", wargs, args, "arguments differ from the fragments "
                                 "joined"))
    missing = [w for w in want if w[0] not in seen]
    if missing:
        cls = "lost_on_truncation" if case.ends_early else "other"
        found.append(finding(cls, missing, got, f"{len(missing)} finished call(s) never handed "
                             "on" + (f"; {exited}" if exited else "")))
    return found


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


