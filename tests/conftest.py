"""Shared test fixtures: where the real recordings are."""

from __future__ import annotations

import functools
import os
import zlib
from pathlib import Path

import pytest

from .support import forked_kernels

forked_kernels.install()  # this worker's notebook kernels, forked with the kit imported

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
# Tests that mostly wait: the torture harness paces its servers and waits on client
# processes. Spread over every worker, they ran together near the end of a run and left the
# cores a quarter idle for a minute; as PACED_WORKERS scopes, each a share of them taken from
# the start, they wait beside the other workers' CPU-bound tests instead.
PACED = "tests/torture/"
PACED_WORKERS = 2
# The SDKs cost seconds of CPU to import (anthropic 2.4 s, openai 1.2 s, google-genai about
# 1 s); the modules that read with them in-process import them where they are used and run
# in one scope, so the other workers never import them (tests/test_ci.py keeps this list).
SDKS = ("anthropic", "openai", "google.genai")
SDK_SCOPE = "tests that run an SDK in-process"
IN_PROCESS_SDKS = frozenset({
    "tests/test_conformance.py", "tests/test_extras.py", "tests/test_sdk_reference_selfcheck.py",
    "tests/providers/test_bedrock_invoke.py", "tests/providers/test_gemini.py",
    "tests/providers/test_gemini_live.py", "tests/providers/test_gemini_streams.py",
    "tests/providers/test_openai_assistants.py", "tests/providers/test_openai_realtime.py",
    "tests/traffic/test_mitm_addon.py", "tests/traffic/test_proxy.py",
    "tests/traffic/test_request_kept.py", "tests/traffic/test_serve.py",
    "tests/traffic/test_websocket.py",
})


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
    a module of ``SHARED_STATE``, one of ``IN_PROCESS_SDKS`` or of the ``PACED`` shares; else
    None (any worker)."""
    module = nodeid.split("::", 1)[0]
    if module in SHARED_STATE:
        return module
    if module in IN_PROCESS_SDKS:
        return SDK_SCOPE
    if module.startswith(PACED):  # shared by a stable hash: the same split on every worker
        return f"{PACED} ({zlib.crc32(nodeid.encode()) % PACED_WORKERS + 1})"
    if not module.startswith(ONE_WORKER):
        return None
    return "browser-lab" if _uses_shared_lab(module) else module


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own; no xdist, no hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup`` with each scope of ``one_worker_scope`` as one group.

    xdist groups by an ``@group`` suffix its worker writes into each test's id, which
    pytest 9.2 no longer lets it change (nodes keep their id elsewhere), so every
    ``xdist_group`` mark is ignored; the scope is decided here from the module instead.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SharedTogether(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return one_worker_scope(nodeid) or super()._split_scope(nodeid)

    return SharedTogether(config, log)  # type: ignore[arg-type]

