"""A value computed once per test session, however many xdist workers ask for it.

Each broken client's run over the whole torture suite costs seconds and several tests read
it (the single-bug test, and every pair test, which learns from it which cases can decide
it). A worker computes it under a lock on a file in the session's shared temporary
directory and pickles it there; the other workers read it back. Tests only, never the
library.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def session_dir(factory: pytest.TempPathFactory) -> Path:
    """The directory every worker of this session shares (the workers' base temp's parent
    under xdist, which is this session's alone; the base temp itself without it)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(root: Path, name: str, compute: Callable[[], T]) -> T:
    """``compute()``, run by the first worker that asks for ``name`` and read back by the
    rest (they wait on its lock meanwhile, rather than compute it too)."""
    path = root / f"{name}.pickle"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = compute()
        path.write_bytes(pickle.dumps(value))
        return value
