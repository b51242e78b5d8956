"""Shared test fixtures: where the real recordings are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
CAPTURES = Path(os.environ.get("STREAMCALLS_CAPTURES", REPO.parent / "shared" / "captures"))
FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")


def capture_files(*formats: str) -> list[Path]:
    """Every raw .sse recording of the given formats (all three by default)."""
    return sorted(p for f in formats or FORMATS for p in (CAPTURES / f).glob("*.sse"))


@pytest.fixture(scope="session")
def captures() -> Path:
    if not CAPTURES.is_dir():
        pytest.skip(f"real captures not found at {CAPTURES}")
    return CAPTURES
