"""What did this server send me? One report per turn: who served it, its calls, its problems
and its anomalies (``python -m streamcalls_lab inspect``).

Captured text never reaches a terminal as is: every preview, tool name and reason goes
through :func:`~streamcalls_lab.display.inert`, so an escape sequence or a bidi override in a
capture shows as its escape and does nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from .._calls import calls as call_table
from ..display import inert
from ..events import PROVIDER_ERROR
from ..loader import load_captures
from ..sources import Capture, Source, resolve
from ..wording import number
from .scan import anomalies
from .served import served_rows

PREVIEW = 48
"""Characters of a call's arguments a report shows."""


@dataclass(frozen=True)
class CallSeen:
    call_id: str | None
    tool: str | None
    chars: int
    preview: str
    """The start of the arguments, made inert."""
    complete: bool
    valid_json: bool


@dataclass(frozen=True)
class Problem:
    offset: int
    problem: str


@dataclass(frozen=True)
class Anomaly:
    anomaly: str
    offset: int
    call_id: str | None
    detail: str


@dataclass(frozen=True)
class TurnReport:
    """One turn: what the kit read of it."""

    turn: str
    provider: str
    host: str | None
    model: str | None
    calls: tuple[CallSeen, ...] = ()
    problems: tuple[Problem, ...] = ()
    """What the kit could not read (damaged bytes, an unknown format)."""
    errors: tuple[Problem, ...] = ()
    """What the provider said went wrong (its error events, read fine)."""
    anomalies: tuple[Anomaly, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON values (``inspect --json``)."""
        return asdict(self)

    def text(self) -> str:
        """The report as readable, inert lines."""
        served = " ".join(f"{k} {inert(v, 60)}" for k, v in (("host", self.host),
                                                               ("model", self.model)) if v)
        out = [f"{inert(self.turn, 120)}  [{self.provider}{', ' + served if served else ''}]"]
        if not self.calls:
            out.append("  no calls")
        for c in self.calls:
            state = "complete" if c.complete else "NOT complete"
            parse = "" if c.valid_json else ", not valid JSON"
            out.append(f"  call {inert(c.call_id, 40) or '(no id)'} {inert(c.tool, 40)}: "
                       f"{c.chars} chars, {state}{parse}: {c.preview}")
        out += [f"  problem at byte {p.offset}: {inert(p.problem, 200)}" for p in self.problems]
        out += [f"  {inert(p.problem, 200)} (at byte {p.offset})" for p in self.errors]
        out += [f"  anomaly {a.anomaly} at byte {a.offset}: {inert(a.detail, 200)}"
                for a in self.anomalies]
        return "\n".join(out)


def matches(turn: TurnReport, *, anomaly: Iterable[str] = (), problems: bool = False,
            host: Iterable[str] = ()) -> bool:
    """Whether ``inspect``'s filters keep a turn: it shows one of the ``anomaly`` names (any,
    when given), has problems (when ``problems``), and was served by one of ``host`` (any,
    when given; compared without case, as host names are)."""
    wanted = set(anomaly)
    if wanted and not wanted & {a.anomaly for a in turn.anomalies}:
        return False
    if problems and not turn.problems:
        return False
    hosts = {h.lower() for h in host}
    return not hosts or (turn.host or "").lower() in hosts


SECTIONS = ("provider", "host", "model")
"""What ``inspect --summary`` counts turns by, besides each problem and anomaly."""
NONE_SAID = "(not said)"


def summary(turns: Iterable[TurnReport]) -> dict[str, Any]:
    """Totals over reports, the first screen of a folder (``inspect --summary``): turns,
    calls, calls not complete and not valid JSON; per provider, host and model, the turns,
    calls, turns with problems and turns with anomalies; per problem and per anomaly, the
    turns that show it (and an anomaly's findings). Plain JSON values, most turns first."""
    totals = Counter[str]()
    groups: dict[str, dict[str, Counter[str]]] = {s: {} for s in SECTIONS}
    problems, anomaly_turns, findings = Counter[str](), Counter[str](), Counter[str]()
    for t in turns:
        seen = {"turns": 1, "calls": len(t.calls),
                "not_complete": sum(not c.complete for c in t.calls),
                "not_valid_json": sum(not c.valid_json for c in t.calls),
                "with_problems": int(bool(t.problems)),
                "with_anomalies": int(bool(t.anomalies))}
        totals.update(seen)
        for section in SECTIONS:
            key = getattr(t, section) or NONE_SAID
            groups[section].setdefault(key, Counter()).update(
                {k: seen[k] for k in ("turns", "calls", "with_problems", "with_anomalies")})
        problems.update({p.problem for p in t.problems})
        anomaly_turns.update({a.anomaly for a in t.anomalies})
        findings.update(a.anomaly for a in t.anomalies)

    def ranked(counts: dict[str, Counter[str]]) -> list[dict[str, Any]]:
        rows = sorted(counts.items(), key=lambda kv: (-kv[1]["turns"], kv[0]))
        return [{"name": name, **{k: c[k] for k in ("turns", "calls", "with_problems",
                                                      "with_anomalies")}}
                for name, c in rows]

    return {
        "totals": {k: totals[k] for k in ("turns", "calls", "not_complete", "not_valid_json",
                                          "with_problems", "with_anomalies")},
        **{section: ranked(groups[section]) for section in SECTIONS},
        "problems": [{"name": k, "turns": n} for k, n in
                     sorted(problems.items(), key=lambda kv: (-kv[1], kv[0]))],
        "anomalies": [{"name": k, "turns": n, "findings": findings[k]} for k, n in
                      sorted(anomaly_turns.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


def summary_text(totals: dict[str, Any], rows: int = 10) -> str:
    """:func:`summary` as aligned, inert lines: every name from a capture (a host, a model,
    a problem) made inert and cut to fit its column; ``rows`` per section, then how many more."""
    t = totals["totals"]
    out = [f"{number(t['turns'])} turns, {number(t['calls'])} calls "
           f"({number(t['not_complete'])} not complete, {number(t['not_valid_json'])} not "
           f"valid JSON); {number(t['with_problems'])} turns with problems, "
           f"{number(t['with_anomalies'])} with anomalies"]
    heads = ("turns", "calls", "problems", "anomalies")
    keys = ("turns", "calls", "with_problems", "with_anomalies")
    for section in SECTIONS:
        out += ["", f"{section:<48}" + "".join(f"{h:>10}" for h in heads)]
        out += [f"{inert(r['name'], 46):<48}" + "".join(f"{number(r[k]):>10}" for k in keys)
                for r in totals[section][:rows]]
        out += _more(totals[section], rows)
    for section, head, cols in (("problems", "problem", ("turns",)),
                                ("anomalies", "anomaly", ("turns", "findings"))):
        if totals[section]:
            out += ["", f"{head:<68}" + "".join(f"{h:>10}" for h in cols)]
            out += [f"{inert(r['name'], 66):<68}" + "".join(f"{number(r[k]):>10}" for k in cols)
                    for r in totals[section][:rows]]
            out += _more(totals[section], rows)
    return "\n".join(out)


def _more(rows: list[Any], shown: int) -> list[str]:
    return [f"  (+{number(len(rows) - shown)} more)"] if len(rows) > shown else []


def _present(value: Any) -> Any:
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else value


def report(source: Source) -> list[TurnReport]:
    """A report for every turn of ``source`` (read leniently: a problem is reported, never
    raised)."""
    return report_captures(resolve(source, require=True))


def report_captures(caps: Sequence[Capture]) -> list[TurnReport]:
    """:func:`report` of captures already resolved (``inspect`` reads a folder a few at a time,
    to show its progress)."""
    deltas = load_captures(caps, strict=False)
    table = call_table(deltas)
    found = anomalies(deltas)
    served = served_rows(caps).set_index("turn")
    calls_of, anomalies_of = _per_turn(table), _per_turn(found)
    out = []
    for turn, rows in deltas.groupby("turn", sort=False, observed=True):
        provider = str(rows["provider"].iloc[0])
        who = served.loc[turn] if turn in served.index else None
        mine = calls_of.get(turn, table.iloc[:0])
        calls = tuple(CallSeen(_present(c.call_id), _present(c.tool), int(c.chars),
                               inert(c.args, PREVIEW), bool(c.complete), bool(c.valid_json))
                      for c in mine.itertuples())
        bad = rows[(rows["kind"] == "error") | (rows["problem"].notna()
                                               & (rows["provider"] == "unknown"))]
        said = bad["problem"].fillna("").str.startswith(PROVIDER_ERROR).to_numpy(dtype=bool)
        problems, errors = _once(bad[~said]), _once(bad[said])
        quirks = anomalies_of.get(turn, found.iloc[:0])
        seen = tuple(Anomaly(str(a.anomaly), int(a.offset), _present(a.call_id), str(a.detail))
                     for a in quirks.itertuples())
        out.append(TurnReport(str(turn), provider,
                              _present(who["host"]) if who is not None else None,
                              _present(who["model"]) if who is not None else None,
                              calls, problems, errors, seen))
    return out


def _per_turn(table: pd.DataFrame) -> dict[Any, pd.DataFrame]:
    """Each turn's rows of a table, split in one pass (not a filter over the table a turn:
    a folder of many turns would read it once per turn)."""
    return dict(iter(table.groupby("turn", sort=False, observed=True)))


def _once(rows: pd.DataFrame) -> tuple[Problem, ...]:
    """Each distinct problem once, at its first byte (one repeated on every frame, a stream
    of an unknown format, is one line that says how many)."""
    first: dict[str, list[int]] = {}
    for r in rows.itertuples():
        first.setdefault(str(r.problem), []).append(int(r.offset))
    return tuple(Problem(at[0], why if len(at) == 1 else f"{why} ({len(at)} frames)")
                 for why, at in first.items())


def frame_text(body: bytes, offset: int) -> str:
    """The frame of ``body`` that starts at ``offset`` (or holds it), as text: the evidence
    of a finding, to show inert (``display.code_block`` escapes it)."""
    from ..framing import decode_any

    for frame in decode_any([body], strict=False):
        if frame.offset <= offset < max(frame.end, frame.offset + 1):
            return body[frame.offset:frame.end].decode("utf-8", "replace")
    return body[offset:offset + 400].decode("utf-8", "replace")
