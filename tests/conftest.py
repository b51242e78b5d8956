"""Shared test fixtures: where the real recordings are."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
CAPTURES = Path(os.environ.get("STREAMCALLS_CAPTURES", REPO.parent / "shared" / "captures"))
FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")
# The browser tests: each module's tests stay on one worker (its Chromium and servers are
# module fixtures), and the modules that drive the session's one JupyterLab all go to the same
# worker, or each worker would start its own. The other browser modules (Voila, the static
# site) are spread like any test, so no one worker holds every browser test.
ONE_WORKER = "tests/browser/"
SHARED_LAB = "jupyter_lab"  # the session fixture that binds a module to the shared JupyterLab
# Modules whose tests share what a process works out once (a cache the library or the module
# keeps): spread over the workers, every worker works it out again. Each stays on one worker.
SHARED_STATE = {
    # check_handler keeps a tape per byte case (6,460 of them) and tests/support/checked.py a
    # report per handler: in a whole fresh-clone run (-n 4) the module's tests took 75
    # core-seconds spread, 67 on one worker.
    "tests/test_check.py": "check_handler's tapes and reports",
}
# The order the scheduler hands out what is not grouped (xdist takes it in collection order,
# so every worker came to the torture harness at once and waited on its paced servers beside
# each other: a fresh clone's cores stood a quarter idle for over a minute). The tests that
# mostly wait on paced servers and client processes are spread through the rest, so each
# waits beside CPU work; the notebooks (a kernel each, seconds long) go first among the rest,
# so the run does not end on one.
PACED = ("tests/torture/",)
LONG = ("notebooks/", "tests/test_notebooks_any_data.py")


def capture_files(*formats: str) -> list[Path]:
    """Every raw .sse recording of the given formats (all three by default)."""
    return sorted(p for f in formats or FORMATS for p in (CAPTURES / f).glob("*.sse"))


@pytest.fixture(scope="session")
def captures() -> Path:
    if not CAPTURES.is_dir():
        pytest.skip(f"real captures not found at {CAPTURES}")
    return CAPTURES


@pytest.fixture(scope="session")
def readable_captures(captures: Path) -> list[Path]:
    """Every real capture a reader reads as it is (the cassettes, read through their importer,
    left out), sorted; more than 500 of them, or the corpus is not the one the tests know."""
    files = [p for p in sorted(captures.rglob("*")) if p.is_file()
             and "_cassettes" not in p.parts
             and p.suffix in (".sse", ".eventstream", ".json", ".jsonl", ".ndjson")]
    assert len(files) > 500
    return files


@functools.cache
def _uses_shared_lab(module: str) -> bool:
    path = REPO / module
    return path.is_file() and SHARED_LAB in path.read_text("utf-8")


def one_worker_scope(nodeid: str) -> str | None:
    """The scope a test runs in when it must share a worker: a browser test's (every module
    that uses the shared JupyterLab: ``browser-lab``; any other browser module: that module),
    or a module of ``SHARED_STATE``; else None (any worker)."""
    module = nodeid.split("::", 1)[0]
    if module in SHARED_STATE:
        return module
    if not module.startswith(ONE_WORKER):
        return None
    return "browser-lab" if _uses_shared_lab(module) else module


def run_order(scopes: list[str]) -> list[str]:
    """``scopes`` as the scheduler hands them out: the groups first, as xdist sorted them (the
    most tests first), then the long single tests, then the rest with the ``PACED`` ones
    spread evenly among them. A group's scope is a name without ``::``; a test's is its id."""
    groups = [s for s in scopes if "::" not in s]
    single = [s for s in scopes if "::" in s]
    long = [s for s in single if s.startswith(LONG)]
    paced = [s for s in single if s.startswith(PACED) and s not in long]
    rest = [s for s in single if not s.startswith((*LONG, *PACED))]
    spread = sorted([((i + 1) / (len(rest) + 1), s) for i, s in enumerate(rest)]
                    + [((i + 0.5) / len(paced), s) for i, s in enumerate(paced)],
                    key=lambda at: at[0])
    return groups + long + [s for _, s in spread]


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own; no xdist, no hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup`` with each scope of ``one_worker_scope`` as one group, handed out in
    :func:`run_order`.

    xdist groups by an ``@group`` suffix its worker writes into each test's id, which
    pytest 9.2 no longer lets it change (nodes keep their id elsewhere), so every
    ``xdist_group`` mark is ignored; the scope is decided here from the module instead.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SharedTogether(LoadGroupScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return one_worker_scope(nodeid) or super()._split_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is whole once the first unit is handed out
                self.ordered = True
                queue = self.workqueue
                for scope in run_order(list(queue)):
                    queue.move_to_end(scope)
            super()._assign_work_unit(node)

    return SharedTogether(config, log)  # type: ignore[arg-type]

