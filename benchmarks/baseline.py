"""The library as it was at a commit, for a benchmark to measure against in the same run."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def library_at(commit: str, into: Path, module: str = "") -> ModuleType | None:
    """``streamcalls_lab`` (or its ``module``) of ``commit``, unpacked under ``into`` and
    imported as ``streamcalls_lab_base``; None (said why) without git or that commit."""
    try:
        tar = subprocess.run(["git", "-C", str(REPO), "archive", commit, "streamcalls_lab"],
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"(base {commit} not measured: {e})")
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    (into / "streamcalls_lab").rename(into / "streamcalls_lab_base")  # imports are relative
    sys.path.insert(0, str(into))
    return importlib.import_module("streamcalls_lab_base" + (f".{module}" if module else ""))
