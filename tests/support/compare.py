"""The fast path of ``load()`` held to the reference decoder, for any body a test builds."""

from __future__ import annotations

import pickle

import pandas as pd

from streamcalls_lab import CaptureError
from streamcalls_lab.loader import load_captures
from streamcalls_lab.sources import Capture


def outcome(body: bytes, *, bulk: bool, strict: bool, provider: str = "auto"):
    """The table a load gives, or the message of the error it raises."""
    try:
        return load_captures([Capture("t", [body])], provider=provider, strict=strict,
                             raw=True, bulk=bulk)
    except CaptureError as e:
        return str(e)


def assert_frames_equal(got: pd.DataFrame, want: pd.DataFrame, **kwargs) -> None:
    """``pd.testing.assert_frame_equal``, decided at once when both frames pickle to the
    same bytes: the same index, columns, dtypes, categories and values, so it would pass
    (a seventh of its cost on the small tables the fast-path tests compare by the
    thousand). Any other pair, however alike, goes through it and its message."""
    if pickle.dumps(got) != pickle.dumps(want):
        pd.testing.assert_frame_equal(got, want, **kwargs)


def assert_same(body: bytes, provider: str = "auto") -> None:
    """Both paths give the same table (or the same error), strict and lenient."""
    for strict in (True, False):
        fast = outcome(body, bulk=True, strict=strict, provider=provider)
        slow = outcome(body, bulk=False, strict=strict, provider=provider)
        if isinstance(slow, str) or isinstance(fast, str):
            assert fast == slow
        else:
            assert_frames_equal(fast, slow)
