"""``check_client``: torture any streaming client, in any language, over real HTTP.

``check_handler`` feeds events to a Python class. Most code that streams tool calls is an
SDK, a framework or a client in another language, and it meets the stream as bytes on a
socket. Here each case is served on 127.0.0.1 (any path answers) and the client command
runs once per case with the base URL and fake keys in its environment. It prints one JSON
line per finished call, ``{"call_id", "tool", "args"}`` (or ``input``, the parsed value, if
that is all it exposes); the harness compares them with the calls sent and names the bug.

The argument documents and turn builders are :mod:`streamcalls_lab.check`'s (entry points:
``DOCUMENTS``, ``TWO_CALLS``, ``TRUNCATED``, ``Call``, ``turn_bytes``, ``expected_calls``,
``byte_turns``, ``TURN_FORMATS``, ``ESCAPE``, ``in_escape``, ``report_frame``); what only a
real transport shows (read boundaries, chunked framing, gzip, line ends, comments) and the
stream-level cases (interleaved calls, index reuse, no terminal event) are made here by
rewriting those turns' frames. What a failure is put down to is decided by the bug-class
specs in :mod:`streamcalls_lab.faults`, the same rules ``check_handler`` applies.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

import pandas as pd

from ..check import TURN_FORMATS
from .cases import PATHS, SUITES, CallTuple, WireCase, cases
from .judge import CLASSES, Finding, judge, markdown, report
from .run import Run, client_env, run_case

__all__ = [
    "CLASSES", "PATHS", "SUITES", "CallTuple", "Finding", "Run", "WireCase", "cases",
    "check_client", "client_env", "judge", "markdown", "report", "run_case",
]


def _command(cmd: str | Sequence[str]) -> list[str]:
    parts = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if not parts:
        raise ValueError("the client command is empty")
    return parts


def check_client(cmd: str | Sequence[str], formats: Sequence[str] = TURN_FORMATS, *,
                 suite: str = "quick", families: Sequence[str] | None = None,
                 jobs: int | None = None, timeout: float = 120.0,
                 progress: bool = True,
                 on_case: Callable[[WireCase, Run, list[Finding]], None] | None = None,
                 ) -> pd.DataFrame:
    """Run a client command against every case of ``suite``; one row per class found.

    Shaped like :func:`~streamcalls_lab.check.check_handler`'s report; ``attrs`` hold
    ``cases``, ``seconds`` (the suite's wall time) and ``failed`` (how many cases failed).
    Cases run ``jobs`` at a time (default: twice the cores, at most 8), each with its own
    server. Empty for a client that survives every case.
    """
    from tqdm.auto import tqdm

    argv = _command(cmd)
    todo = cases(formats, suite, families)
    jobs = jobs or min(8, 2 * (os.cpu_count() or 1))
    start = time.perf_counter()
    findings: list[Finding] = []
    failed = 0
    with ThreadPoolExecutor(jobs) as pool, tqdm(total=len(todo), disable=not progress,
                                                desc="torture", unit="case") as bar:
        futures = {pool.submit(run_case, argv, c, timeout): c for c in todo}
        for future in as_completed(futures):
            case, run = futures[future], future.result()
            if run.timed_out:  # a loaded machine, or a real hang: once more, alone, to tell
                run = run_case(argv, case, 2 * timeout)
            found = judge(case, run)
            findings += found
            failed += bool(found)
            if on_case is not None:
                on_case(case, run, found)
            bar.update()
    out = report(findings, len(todo), time.perf_counter() - start)
    out.attrs["failed"] = failed
    return out

