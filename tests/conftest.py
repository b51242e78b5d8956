"""Shared test fixtures: where the real recordings are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
CAPTURES = Path(os.environ.get("STREAMCALLS_CAPTURES", REPO.parent / "shared" / "captures"))
FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")
# The folder whose modules share one JupyterLab, one Chromium and one executed course per
# process: under pytest-xdist all its tests go to a single worker, or each worker would start
# its own and run the whole course again.
ONE_WORKER = "tests/browser/"


def capture_files(*formats: str) -> list[Path]:
    """Every raw .sse recording of the given formats (all three by default)."""
    return sorted(p for f in formats or FORMATS for p in (CAPTURES / f).glob("*.sse"))


@pytest.fixture(scope="session")
def captures() -> Path:
    if not CAPTURES.is_dir():
        pytest.skip(f"real captures not found at {CAPTURES}")
    return CAPTURES


def one_worker_scope(nodeid: str) -> str | None:
    """The shared scope of a test that must run beside the other browser tests, else None."""
    return "browser" if nodeid.split("::", 1)[0].startswith(ONE_WORKER) else None


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own; no xdist, no hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup`` with the browser modules as one group.

    xdist groups by an ``@group`` suffix its worker writes into each test's id, which
    pytest 9.2 no longer lets it change (nodes keep their id elsewhere), so every
    ``xdist_group`` mark is ignored; the scope is decided here from the module instead.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class BrowserTogether(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return one_worker_scope(nodeid) or super()._split_scope(nodeid)

    return BrowserTogether(config, log)  # type: ignore[arg-type]

