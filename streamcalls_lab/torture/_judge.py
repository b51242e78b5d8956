"""Judging one run: what went wrong, put down to one class each, what was tolerated, and
the report.

What a client did is described as :class:`~streamcalls_lab.faults.Symptom` records, the
same as ``check_handler`` builds, and each is put down to a class by the specs in
:mod:`streamcalls_lab.faults`: the rules are theirs, not this module's. What the calls of a
cut stream must be is read from the stream itself: a turn whose stop reason never came may
keep every call back, and may hand on those its format finished; a call handed on before
its format finished it, with its arguments whole, is a :class:`Tolerance`, not a failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import pandas as pd

from .._calls import calls
from ..accumulate import present
from ..check import DOCUMENTS, report_frame
from ..display import code_point, hidden
from ..faults import CLASSES as CLASSES  # what a failure is put down to, in report order
from ..faults import (
    SPECS,
    Seen,
    Sent,
    classify,
    cover,
    describe,
    json_value,
    refuted,
    symptoms,
    through,
    weakly,
)
from ..faults.symptom import IDENTITY_FIELDS
from ..loader import load
from ..producers.quirks import with_implied
from ._cases import WireCase
from ._clients import CLIENT_PACKAGES
from ._processes import OUTPUT_LIMIT
from .run import GZIP, IDENTITY, Run


# -- judging -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    case: WireCase
    cls: str
    expected: str
    got: str
    detail: str
    could: frozenset[str] = frozenset()
    """Every class that could explain it (``cls`` is the one chosen): :func:`settle`
    chooses again over a whole suite."""
    through: frozenset[tuple[str, str]] = frozenset()
    """``(cls, other)``: it is also ``cls``'s mistake showing through ``other``'s (a spec's
    ``through``), which :func:`settle` weighs where the suite names both."""
    weak: frozenset[str] = frozenset()
    """The classes whose mistake it may be on weak evidence (a spec's ``weak``): in
    :func:`settle`, one of them where only a fallback explains it and the run names it."""
    refutes: frozenset[str] = frozenset()
    """The classes its case shows the client does not have (a spec's ``refuted``): in
    :func:`settle`, no other failure of the run is put down to them where another class
    explains it."""
    lost_all: bool = False
    """Every call lost, nothing handed on, nothing raised: where a plain argument document's
    case of its format failed so too, :func:`settle` reads nothing more into it."""


@dataclass(frozen=True)
class Tolerance:
    """Something a client did on a case that is not a failure, but worth knowing."""

    case: WireCase
    note: str


EARLY = ("handed on a call before any stop for it came (a later call starting is not one), "
         "its arguments whole: early, not wrong")
SERVED_IDENTITY = "served identity: the client did not accept gzip"
OUTPUT_CUT = (f"output cut: the client printed more than {OUTPUT_LIMIT // 1024**2} MiB on a "
              "stream (stdout or stderr); only the first were kept and judged")


def _got(run: Run) -> tuple[list[Seen], bool]:
    """The calls printed, and whether they are compared as parsed values (``input``)."""
    parsed = bool(run.calls) and all("args" not in c and "input" in c for c in run.calls)
    return [(c.get("call_id"), c.get("tool"), c.get("input") if parsed else c.get("args"))
            for c in run.calls], parsed


def _tail(text: str) -> str:
    lines = [line for line in text.strip().split("\n") if line.strip()]  # LF only: U+2028 is text
    return lines[-1][:200] if lines else ""


@dataclass(frozen=True)
class _Read:
    """A body as the kit's own reader finds it."""

    sent: tuple[Sent, ...]
    """Every call it sends (a cut one too)."""
    finished: frozenset[Any]
    """The ids of the calls its format says finished (a stop or done event came)."""
    stopped: bool
    """The turn's stop reason came (Chat's finish_reason, Anthropic's stop_reason, a
    Responses status): a turn without one never finished."""


@lru_cache(maxsize=1024)  # a suite judges each body once per client
def _read(body: bytes) -> _Read:
    deltas = load(body, strict=False)
    table = calls(deltas)
    sent = _as_sent(deltas)
    return _Read(tuple(Sent(present(r.call_id), present(r.tool), r.args, present(r.block),
                            present(r.choice), bool(r.complete),
                            sent.blanked.get(present(r.call_id), frozenset()),
                            sent.fragments.get(present(r.call_id)),
                            present(r.call_id) in sent.anonymous,
                            present(r.call_id) in sent.renamed,
                            present(r.call_id) in sent.stop_unnamed)
                       for r in table.itertuples()),
                 frozenset(present(r.call_id) for r in table.itertuples() if r.complete),
                 bool(deltas["reason"].notna().any()))


@dataclass(frozen=True)
class _AsSent:
    """What the body sent of each call after its announcement, by the id it was announced
    under (a fragment or a stop goes with the call last announced at its choice and block)."""

    blanked: dict[Any, frozenset[str]]
    """The identity fields a fragment sent as ``""``."""
    fragments: dict[Any, tuple[str, ...]]
    """Its argument fragments, in order."""
    anonymous: frozenset[Any]
    """The calls some text of which came after the announcement's frame in a fragment
    naming no call."""
    renamed: frozenset[Any]
    """The calls whose stop named them by another id."""
    stop_unnamed: frozenset[Any]
    """The calls a stop (or done) event of their own came for (one ending that call alone:
    Anthropic's block stop, not Chat's finish, which ends every call), none naming a call."""


def _as_sent(deltas: pd.DataFrame) -> _AsSent:
    columns = [deltas[c].tolist()
               for c in ("kind", "choice", "block", "fragment", "frame", *IDENTITY_FIELDS)]
    blanks = any("" in values for values in columns[5:])  # most bodies send no blank
    announced: dict[Any, tuple[Any, Any]] = {}
    blanked: dict[Any, frozenset[str]] = {}
    fragments: dict[Any, list[str]] = {}
    anonymous, renamed, named = set(), set(), set()
    stops: dict[Any, list[Any]] = {}  # each call's stop frames
    ending: dict[Any, int] = {}  # how many stop rows each such frame holds
    for kind, choice, block, fragment, frame, *identity in zip(*columns, strict=True):
        call_id = identity[0]  # (IDENTITY_FIELDS: call_id, then tool)
        if kind == "call_start":
            announced[choice, block] = (present(call_id), frame)
        elif kind in ("block_stop", "args_done"):
            ending[frame] = ending.get(frame, 0) + 1
            if (choice, block) not in announced:
                continue
            call = announced[choice, block][0]
            stops.setdefault(call, []).append(frame)
            if present(call_id) not in (None, ""):
                named.add(call)
                if kind == "block_stop" and present(call_id) != call:
                    renamed.add(call)
        elif kind == "args_delta" and (choice, block) in announced:
            call, at = announced[choice, block]
            if blanks and (empty := frozenset(
                    f for f, v in zip(IDENTITY_FIELDS, identity, strict=True)
                    if isinstance(v, str) and not v)):
                blanked[call] = blanked.get(call, frozenset()) | empty
            if isinstance(fragment, str):
                fragments.setdefault(call, []).append(fragment)
                if fragment and frame != at and not present(call_id):
                    anonymous.add(call)
    return _AsSent(blanked, {call: tuple(parts) for call, parts in fragments.items()},
                   frozenset(anonymous), frozenset(renamed),
                   frozenset(call for call, frames in stops.items()
                             if call not in named and any(ending[f] == 1 for f in frames)))


def verdict(case: WireCase, run: Run) -> tuple[list[Finding], list[Tolerance]]:
    """The failures of one run, each put down to one class (the fewest that explain the
    run; :func:`settle` chooses over a whole suite), and what was tolerated."""
    got, parsed = _got(run)
    # parsed, a call with no argument text is the empty object a tool takes as no input
    want = [(i, t, ({} if not a.strip() else json_value(a)) if parsed else a)
            for i, t, a in case.expected]
    read = _read(case.body)
    notes = []
    if case.gzip and run.encoding == IDENTITY:
        notes.append(SERVED_IDENTITY)
    if run.cut:
        notes.append(OUTPUT_CUT)
    if case.ends_early and not read.stopped:
        # A turn that never finished: keeping all its calls back is right in every format,
        # and so is handing on what the format finished; judged are the calls handed on.
        handed = {g[0] for g in got}
        want = [w for w in want if w[0] in handed]
        if any(w[0] not in read.finished and w in got for w in want):
            notes.append(EARLY)
    if run.timed_out:
        error = run.stderr
    else:
        error = f"exited {run.returncode}: {_tail(run.stderr)}" if run.returncode else ""
    found = symptoms(sent=read.sent, expected=want, got=got, parsed=parsed,
                     error=error, hung=run.timed_out, ends_early=case.ends_early,
                     escape_cut=case.escape_cut, reads_cut=True,  # a socket cuts anywhere
                     content_encoding=GZIP if run.encoding == GZIP else "",
                     quirks=with_implied(case.quirks))
    out = []
    for cls, mine in cover([(s, classify(s)) for s in found], lambda f: f[1]).items():
        out += [Finding(case, cls, *describe(s), could, through(s), weakly(s), refuted(s),
                        s.only_lost and not s.got and not s.error and not s.hung)
                for s, could in mine]
    return out, [Tolerance(case, note) for note in notes]


def settle(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` each put down to the fewest classes that explain its family's failures:
    a run alone cannot tell a client keyed by id from one that takes an empty id for a new
    call, its family's other runs (or, on a tie, a class the suite names anyway) can; a class
    another family forces never takes a failure by count (issue 29).

    A failure one class's mistake shows through another's (``Finding.through``) may be put
    down to it where the suite names both for failures of their own: a client keyed by id
    that keeps calls in a list by position raises at the slot its nameless buffer took,
    just as one reading ``choices[0]`` raises on a chunk with no choices, and only the run's
    other failures say which client it is.

    A class some failure of the run refutes (``Finding.refutes``: its case shows the client
    does not make that mistake) is no failure's explanation where another class is one. A
    failure only a fallback explains (a call lost) goes to a class whose mistake it may
    be (``Finding.weak``) where the run names that class for other failures.

    Where a plain argument document's case (``check.DOCUMENTS``) lost every call, nothing
    handed on, the format's other cases that lost every call show nothing of their own (a
    class only their quirk or framing suggests cannot be seen through that loss): each is
    explained as the plain case is (``Finding.lost_all``). Within one format only: a client
    reads each format by code of its own."""
    gone = frozenset().union(*(f.refutes for f in findings))

    def own(f: Finding) -> frozenset[str]:
        return f.could or frozenset({f.cls})

    plain: dict[str, frozenset[str]] = {}
    for f in findings:
        if f.lost_all and f.case.family in DOCUMENTS:
            plain[f.case.format] = plain.get(f.case.format, frozenset()) | own(f)

    def could(f: Finding) -> frozenset[str]:
        every = plain[f.case.format] if f.lost_all and f.case.format in plain else own(f)
        return every - gone or every

    cls = _chosen(findings, could)
    named = set(cls.values())
    wider = {id(f): could(f) | {c for c, other in f.through if {c, other} <= named}
             for f in findings if f.through}
    if any(wider[i] != could(f) for f in findings if (i := id(f)) in wider):
        again = _chosen(findings, lambda f: wider.get(id(f)) or could(f))
        # taken only if every class it put a failure down to through another still has
        # that other named: a premise the new choice dropped leaves the first choice
        kept = set(again.values())
        if all(again[id(f)] in could(f) or any(c == again[id(f)] and other in kept
                                              for c, other in f.through)
               for f in findings):
            cls = again
    fallback = {name for name, spec in SPECS.items() if spec.fallback}
    named = set(cls.values()) - fallback
    for f in findings:
        if f.weak & named and could(f) <= fallback:
            cls[id(f)] = min(f.weak & named, key=list(SPECS).index)
    return [replace(f, cls=cls[id(f)]) for f in findings]


def _chosen(findings: Sequence[Finding],
            could: Callable[[Finding], frozenset[str]]) -> dict[int, str]:
    """The class each finding is put down to (by ``id``), the fewest per family."""
    chosen = cover(findings, could, lambda f: f.case.family)
    return {id(f): c for c, mine in chosen.items() for f in mine}


def judge(case: WireCase, run: Run) -> list[Finding]:
    """The failures of one run (:func:`verdict` without the tolerances)."""
    return verdict(case, run)[0]


def _smallest(items: Sequence[Finding] | Sequence[Tolerance]) -> Any:
    return min(items, key=lambda f: (f.case.size, len(f.case.example)))


def report(findings: Sequence[Finding], n_cases: int, seconds: float,
           tolerances: Sequence[Tolerance] = ()) -> pd.DataFrame:
    """One row per class (chosen over all ``findings``: :func:`settle`): the smallest
    failing example, how many failures it has, and every family it failed on.
    ``attrs["tolerances"]``: one record per note (``note``, ``format``, ``family``,
    ``example`` of its smallest case, ``cases``), not failures."""
    findings = settle(findings)
    best = []
    for cls in CLASSES:
        mine = [f for f in findings if f.cls == cls]
        if mine:
            best.append((cls, _smallest(mine), len(mine), {f.case.family for f in mine}))
    out = report_frame(best)
    noted = []
    for note in dict.fromkeys(t.note for t in tolerances):
        mine = [t for t in tolerances if t.note == note]
        case = _smallest(mine).case
        noted.append({"note": note, "format": case.format, "family": case.family,
                      "example": case.example, "cases": len(mine)})
    out.attrs.update(cases=n_cases, seconds=round(seconds, 2), tolerances=noted)
    return out


TOLERANCE_COLUMNS = ("note", "format", "family", "example", "cases")


def tolerated(table: pd.DataFrame) -> pd.DataFrame:
    """A report's tolerances (``attrs["tolerances"]``) as a table, one row per note."""
    return pd.DataFrame(table.attrs.get("tolerances") or [], columns=list(TOLERANCE_COLUMNS))


_NUMBERS = re.compile(r"\d+")


def not_started(cases: Sequence[WireCase], runs: Sequence[Run]) -> str | None:
    """Why a client did not start, when it failed the same way on every case before reading
    anything, else None: no case handed anything on, and no request reached the server on
    any, or every one failed (exited non-zero or hung) with the same last line of stderr, a
    plain argument document's case among them (a client that fails only on odd streams,
    however alike, has bugs: it started)."""
    if not runs or any(r.calls for r in runs):
        return None
    tails = {_NUMBERS.sub("N", _tail(r.stderr)) for r in runs}  # ports, pids, timings
    same = len(tails) == 1
    if all(r.requests == 0 for r in runs):
        first = runs[0]
        if first.timed_out:
            return f"{first.stderr}, and no request reached the server"
        return _tail(first.stderr) or (f"exited {first.returncode} before any request "
                                       "reached the server")
    if same and all(r.returncode != 0 for r in runs) and any(
            c.family in DOCUMENTS for c in cases):
        return _tail(runs[0].stderr) or runs[0].stderr
    return None


_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def install_hint(why: str | None) -> str | None:
    """What to install, in plain words, when a client did not start for want of a Python
    module (``why``, a ``not_started`` reason, names a ``ModuleNotFoundError``); else None.
    A missing SDK is not a bug of the client, and the report says so rather than crash."""
    found = _NO_MODULE.search(why or "")
    if found is None:
        return None
    parts = found.group(1).split(".")
    # the longest prefix a client imports (google.genai is google-genai), else the top module
    module = next((m for m in (".".join(parts[:n]) for n in range(len(parts), 0, -1))
                   if m in CLIENT_PACKAGES), parts[0])
    package = CLIENT_PACKAGES.get(module, module)
    every = (' Every client in clients/ at once: pip install -e ".[clients]" from the '
             "repository (make lab does it)." if module in CLIENT_PACKAGES else "")
    return (f"The client did not start: it imports the Python module {module!r}, which is not "
            f"installed where it runs. Install it with: python -m pip install {package}"
            f" (with that Python).{every}")


_VERBATIM = frozenset({"example", "expected", "got"})


_BACKTICKS = re.compile(r"`+")
# what can start inline markup, an entity or HTML (an underscore between two letters or
# digits cannot, CommonMark 6.2, so class names stay readable)
_MARKUP = re.compile(r"([\\`*\[\]<>&|~!]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029]")


def code_span(value: object) -> str:
    """``value`` as one Markdown code span on one line, whatever it holds: fenced by a run of
    backticks longer than any in it (CommonMark 6.1), padded by a space each side (which
    the renderer strips), line breaks as spaces, ``|`` escaped (a table cell's pipe; GFM
    takes ``\\|`` out before the span is read). A code span shows its text, never markup
    or HTML, so a captured value cannot break out of it."""
    text = _one_line(value).replace("|", "\\|")
    fence = "`" * (1 + max(map(len, _BACKTICKS.findall(text)), default=0))
    return f"{fence} {text} {fence}"


def plain_text(value: object) -> str:
    """``value`` as Markdown text on one line (a table cell) that renders as itself: each
    character that can start inline markup, an entity or HTML backslash-escaped."""
    return _MARKUP.sub(r"\\\1", _one_line(value))


def _one_line(value: object) -> str:
    """``value`` on one line, each character that would act on a terminal rather than show
    (an escape sequence's ESC, a bidi override) written as its escape: a report is printed
    and cat, not only rendered."""
    return "".join(code_point(ch) if hidden(ch) else ch for ch in _BREAKS.sub(" ", str(value)))


def _cell(value: object, verbatim: bool) -> str:
    """Verbatim cells as code spans (backslashes shown as sent), the rest as plain text."""
    return code_span(value) if verbatim else plain_text(value)


def markdown(table: pd.DataFrame) -> str:
    """A report (or any frame) as a Markdown table: captured text only as code spans."""
    if table.empty:
        return "no failures"
    head = "| " + " | ".join(map(plain_text, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    code = [c in _VERBATIM for c in table.columns]
    rows = ["| " + " | ".join(_cell(v, c) for v, c in zip(row, code, strict=True)) + " |"
            for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


