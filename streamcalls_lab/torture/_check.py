"""``check_client``: each case served, the client run on it, and the findings reported
(the package's docstring says how)."""

from __future__ import annotations

import os
import queue
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager

import pandas as pd

from ..check import TURN_FORMATS
from ._cases import WireCase, cases
from ._judge import Finding, Tolerance, install_hint, not_started, report, verdict
from .run import LoopClient, Run, run_case, served_seconds


def _command(cmd: str | Sequence[str]) -> list[str]:
    parts = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if not parts:
        raise ValueError("the client command is empty")
    return parts


_Runner = Callable[[WireCase], Run]


@contextmanager
def _runner(argv: list[str], timeout: float, loop: bool, jobs: int) -> Iterator[_Runner]:
    """Run one case: a process of its own, or (loop) whichever of ``jobs`` looping
    processes is free."""
    if not loop:
        yield lambda case: run_case(argv, case, timeout)
        return
    idle: queue.SimpleQueue[LoopClient] = queue.SimpleQueue()
    clients = [LoopClient(argv, timeout) for _ in range(jobs)]  # each starts on first use
    for client in clients:
        idle.put(client)

    def run(case: WireCase) -> Run:
        client = idle.get()
        try:
            return client.run(case)
        finally:
            idle.put(client)

    try:
        yield run
    finally:
        for client in clients:
            client.close()


def _alone(argv: list[str], case: WireCase, timeout: float, loop: bool) -> Run:
    if not loop:
        return run_case(argv, case, timeout)
    with LoopClient(argv, timeout) as client:
        return client.run(case)


CASES_PER_PROCESS = 8
"""In loop mode, the cases one looping client is started for by default: a start costs
what an SDK's import does (a second or two of CPU: the openai package's took 1 s), a quick
case a quarter of a second of paced serving, so a few cases are served by one process
rather than waiting on the imports of several (notebook 7's five cases: four imports, now
one)."""


def check_client(cmd: str | Sequence[str], formats: Sequence[str] = TURN_FORMATS, *,
                 suite: str = "quick", families: Sequence[str] | None = None,
                 jobs: int | None = None, timeout: float = 120.0, loop: bool = False,
                 progress: bool = True,
                 on_case: Callable[[WireCase, Run, list[Finding]], None] | None = None,
                 ) -> pd.DataFrame:
    """Run a client command against every case of ``suite``; one row per class found.

    Shaped like :func:`~streamcalls_lab.check.check_handler`'s report; ``attrs`` hold
    ``cases``, ``seconds`` (the suite's wall time), ``failed`` (how many cases failed),
    ``tolerances`` (what the client was let off, one record per note: not failures) and
    ``not_started`` (why the client did not start, when it failed the same way on every
    case before reading anything; the report then has no rows; else None) and ``install``
    (for a client that did not start for want of a Python module, what to install:
    :func:`~.judge.install_hint`; else None). Cases run
    ``jobs`` at a time (default: twice the cores, at most 8; in loop mode also no more
    than one process per :data:`CASES_PER_PROCESS` cases), each with its own server;
    ``formats``: any of :data:`SERVED_FORMATS` (default: the provider formats);
    ``loop``: ``jobs`` client processes each serve cases in turn, read from their stdin (the
    protocol is :mod:`.run`'s), instead of a process per case. Empty for a client that
    survives every case.
    """
    from tqdm.auto import tqdm

    argv = _command(cmd)
    todo = cases(formats, suite, families)
    if not jobs:  # (0, as None: the default)
        jobs = min(8, 2 * (os.cpu_count() or 1))
        if loop:
            jobs = min(jobs, -(-len(todo) // CASES_PER_PROCESS))
    jobs = max(1, min(jobs, len(todo)))
    start = time.perf_counter()
    runs: dict[int, Run] = {}
    judged: dict[int, tuple[list[Finding], list[Tolerance]]] = {}
    with (_runner(argv, timeout, loop, jobs) as run_one, ThreadPoolExecutor(jobs) as pool,
          tqdm(total=len(todo), disable=not progress, desc="torture", unit="case") as bar):
        longest_first = sorted(range(len(todo)), key=lambda n: -served_seconds(todo[n]))
        futures = {pool.submit(run_one, todo[n]): n for n in longest_first}
        for future in as_completed(futures):
            n = futures[future]
            case, run = todo[n], future.result()
            if run.timed_out:  # a loaded machine, or a real hang: once more, alone, to tell
                run = _alone(argv, case, 2 * timeout, loop)
            runs[n], judged[n] = run, verdict(case, run)
            if on_case is not None:
                on_case(case, run, judged[n][0])
            bar.update()
    seconds = time.perf_counter() - start
    why = not_started(todo, [runs[n] for n in range(len(todo))])
    if why is not None:
        out = report([], len(todo), seconds)
        out.attrs.update(failed=0, not_started=why, install=install_hint(why))
        return out
    in_order = [judged[n] for n in range(len(todo))]  # the same report however runs finish
    out = report([f for found, _ in in_order for f in found], len(todo), seconds,
                 [t for _, noted in in_order for t in noted])
    out.attrs.update(failed=sum(bool(found) for found, _ in in_order), not_started=None,
                     install=None)
    return out
