"""Assertions that read like the notebooks: a failure names the bug class, the smallest
failing case, expected and got, and the one-line fix.

- :func:`assert_calls`: the calls a client under test handed on, for one replayed
  :class:`~.variants.Variant`, judged by the bug-class specs (:mod:`streamcalls_lab.faults`,
  the rules ``check_handler`` and the torture judge apply);
- :func:`assert_handler`: an accumulator class or function, through
  :func:`~streamcalls_lab.check.check_handler`;
- :func:`assert_client`: a client command, through the torture harness
  (:func:`~streamcalls_lab.torture.check_client`).

Each raises :class:`StreamcallsFailure`, an ``AssertionError`` whose text is what pytest
prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..check import Handler, check_handler
from ..faults import classify, describe, summary, symptoms
from .variants import Variant


class StreamcallsFailure(AssertionError):
    """A handler or client got a streamed turn wrong; ``classes`` are the bug classes."""

    def __init__(self, text: str, classes: Sequence[str]) -> None:
        super().__init__(text)
        self.classes = tuple(classes)


def _one_line(value: object, limit: int = 300) -> str:
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(value))
    return text if len(text) <= limit else text[:limit] + "…"


def _entry(cls: str, case: str, expected: str, got: str, detail: str = "") -> str:
    lines = [f"bug class: {cls}", f"  case:     {_one_line(case)}",
             f"  expected: {_one_line(expected)}", f"  got:      {_one_line(got)}"]
    if detail:
        lines.append(f"  detail:   {_one_line(detail)}")
    lines.append(f"  fix:      {_one_line(summary(cls), 600)}")
    return "\n".join(lines)


def _field(call: Any, key: str) -> Any:
    if isinstance(call, Mapping):
        return call.get(key)
    return getattr(call, key, None)


def assert_calls(got: Iterable[Any], variant: Variant, *, error: BaseException | None = None,
                 parsed: bool = False) -> None:
    """Fail unless ``got`` (the calls handed on: mappings or objects with ``call_id``,
    ``tool``, ``args``) are ``variant``'s expected calls; ``error``: what the client raised,
    if anything; ``parsed``: ``args`` are parsed values (a helper that shows only those)."""
    seen = tuple((_field(c, "call_id"), _field(c, "tool"), _field(c, "args")) for c in got)
    why = "" if error is None else f"raised {type(error).__name__}: {error}"
    expected = variant.expected
    if parsed:
        import json

        # a call with no arguments sent is an empty object to a parsing helper
        # (anthropic's ``input``, LangChain's ``args``)
        expected = tuple((i, t, json.loads(a) if a.strip() else {}) for i, t, a in expected)
    found = symptoms(sent=variant.sent, expected=expected, got=seen, parsed=parsed, error=why,
                     ends_early=variant.ends_early, escape_cut=variant.escape_cut,
                     reads_cut=variant.reads_cut, quirks=variant.quirks)
    if not found:
        return
    parts, classes = [], []
    for s in found:
        names = sorted(classify(s))
        exp, have, detail = describe(s)
        classes += names
        parts += [_entry(n, f"{variant.id}: {variant.what}", exp, have, detail) for n in names]
    raise StreamcallsFailure("the client got the replayed turn wrong\n" + "\n".join(parts),
                             classes)


def _raise_report(report: pd.DataFrame, what: str) -> None:
    if not len(report):
        return
    parts = [_entry(r["class"], f"{r['format']}, {r['family']}: {r['example']}",
                    r["expected"], r["got"], r["detail"])
             + f"\n  failures: {r['failures']} of {report.attrs.get('cases', '?')} cases"
             for _, r in report.iterrows()]
    raise StreamcallsFailure(f"{what} fails {len(report)} bug class(es)\n" + "\n".join(parts),
                             list(report["class"]))


def assert_handler(handler: Handler, *, bytes_level: bool | None = None) -> pd.DataFrame:
    """Run ``check_handler`` on ``handler``; fail naming each class found (its smallest
    case, expected, got, fix). Returns the (empty) report."""
    report = check_handler(handler, bytes_level=bytes_level)
    _raise_report(report, getattr(handler, "__name__", type(handler).__name__))
    return report


def assert_client(cmd: str | Sequence[str], formats: Sequence[str] | None = None,
                  **options: Any) -> pd.DataFrame:
    """Run the torture harness on a client command (``options``: ``check_client``'s, e.g.
    ``families``, ``loop``); fail naming each class found, or that it did not start."""
    from ..torture import check_client

    kwargs: dict[str, Any] = {"progress": False, **options}
    report = (check_client(cmd, **kwargs) if formats is None
              else check_client(cmd, formats, **kwargs))
    why = report.attrs.get("not_started")
    if why:
        raise StreamcallsFailure(f"the client did not start: {_one_line(why, 600)}", [])
    _raise_report(report, f"client {cmd if isinstance(cmd, str) else ' '.join(cmd)}")
    return report
