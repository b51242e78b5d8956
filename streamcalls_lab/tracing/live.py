"""Torture for tracers: serve each torture case to a traced program and judge what its
tracer exported for every call.

The program runs once (the torture harness's loop mode, :mod:`streamcalls_lab.torture.run`)
with ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointed at an :class:`~.receiver.OTLPReceiver` on
loopback and each case's provider base URL handed to it per case; it must flush its
exporter before it prints the case's end line. What arrived is judged per call against the
case's calls with :func:`~.judge.judge_turn`; the report has the torture report's columns,
one row per verdict class with its smallest example and the one-line fix.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .._deepjson import dumps
from ..check import REPORT_COLUMNS
from ..torture._cases import WireCase, cases
from ..torture.run import LoopClient
from .judge import Judged, WireCall, judge_turn
from .otlp_json import turns_of
from .receiver import OTLPReceiver
from .records import TracedTurn
from .verdicts import PASSING, VERDICTS

FLUSH_WAIT = 5.0
"""Seconds to wait after a case's end line for its model span, for an exporter that
flushes in the background."""


def wire_calls(case: WireCase) -> list[WireCall]:
    return [WireCall(i, t, a if isinstance(a, str) else dumps(a)) for i, t, a in case.expected]


def tracer_env(endpoint: str) -> dict[str, str]:
    """What the traced program is given beside the torture harness's variables."""
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}


def _model_turns(receiver: OTLPReceiver, wait: float) -> list[TracedTurn]:
    found: list[TracedTurn] = []
    docs: list[Any] = []
    until = time.monotonic() + wait
    while True:
        docs += receiver.take()
        found = turns_of(docs, "OTLP/HTTP")
        if found or time.monotonic() >= until:
            return found
        time.sleep(0.05)


def _judge_case(case: WireCase, traced: list[TracedTurn], error: str) -> list[dict[str, Any]]:
    wire = wire_calls(case)
    # a tracer may export several model spans for one turn (Logfire: the request, then the
    # streamed response): those that record calls are the record
    traced = [t for t in traced if t.keeps_calls] or traced[:1]
    if traced:
        judged = judge_turn(wire, [c for t in traced for c in t.calls])
    else:
        why = "no model span exported" + (f" (the program failed: {error})" if error else "")
        judged = [Judged(w, None, "missing", why) for w in wire]
    return [{"format": case.format, "family": case.family, "example": case.example,
             "call_id": j.wire.call_id, "tool": j.wire.tool, "expected": j.wire.args,
             "got": j.traced.args if j.traced and j.traced.args is not None else "",
             "verdict": j.verdict, "note": j.note,
             "kept_in": traced[0].kept_in if traced else ""} for j in judged]


def check_tracer(cmd: str | Sequence[str], formats: Sequence[str] = ("openai-chat",), *,
                 suite: str = "quick", families: Sequence[str] | None = None,
                 timeout: float = 60.0) -> pd.DataFrame:
    """Run a traced program over the cases; one report row per failing verdict class.

    ``attrs``: ``calls`` (every call judged: its case, wire text, what was traced, verdict),
    ``cases``, ``failed`` (cases with a call not ``ok``/``reserialised``), ``refusals``
    (exports the receiver could not read), ``seconds`` and ``not_started`` (the program's
    error when it failed on every case and exported nothing, else None).
    """
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    todo = cases(formats, suite, families)
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    with OTLPReceiver() as receiver:
        env = [f"{k}={v}" for k, v in tracer_env(receiver.endpoint).items()]
        with LoopClient(["env", *env, *argv], timeout) as client:
            for case in todo:
                run = client.run(case)
                error = run.stderr.strip().split("\n")[-1] if run.returncode else ""
                if error:
                    errors.append(error)
                # a program that failed flushes nothing more: no wait for it
                rows += _judge_case(case, _model_turns(receiver, 0 if error else FLUSH_WAIT),
                                    error)
        refusals = list(receiver.refusals)
    calls = pd.DataFrame(rows, columns=["format", "family", "example", "call_id", "tool",
                                        "expected", "got", "verdict", "note", "kept_in"])
    out = report(calls)
    failed = {(r["format"], r["family"], r["example"]) for r in rows
              if r["verdict"] not in PASSING}
    # the program failed on every case and exported nothing: it did not start (torture's
    # not_started), and the verdicts say nothing about its tracer
    not_started = errors[0] if len(errors) == len(todo) and not (
        calls["verdict"].isin(list(PASSING)).any() or calls["got"].str.len().any()) else None
    out.attrs.update(calls=calls, cases=len(todo), failed=len(failed), refusals=refusals,
                     seconds=time.perf_counter() - start, not_started=not_started)
    return out


def report(calls: pd.DataFrame) -> pd.DataFrame:
    """The torture report's columns, one row per failing verdict: its smallest example."""
    best = []
    for name, verdict in VERDICTS.items():
        if name in PASSING:
            continue
        mine = calls[calls["verdict"] == name]
        if len(mine):
            first = mine.loc[mine["expected"].str.len().idxmin()]
            best.append({"class": name, "format": first["format"], "family": first["family"],
                         "example": first["example"], "expected": first["expected"],
                         "got": first["got"], "detail": first["note"] or verdict.meaning,
                         "failures": len(mine), "summary": verdict.fix})
    return pd.DataFrame(best, columns=list(REPORT_COLUMNS)).astype(
        {c: "str" for c in REPORT_COLUMNS if c != "failures"} | {"failures": "int64"})
