"""``check_handler`` once per handler: many tests read the same report, and each run is the
whole suite (thousands of turns). Cached here, for the tests, never in the library: a report
depends on the registered classes too, so the cache is keyed by them as well."""

from __future__ import annotations

from functools import cache
from typing import Any

import pandas as pd

from streamcalls_lab import check_handler
from streamcalls_lab.faults import SPECS, BugClass


@cache
def _report(handler: Any, specs: tuple[BugClass, ...]) -> pd.DataFrame:
    return check_handler(handler)


def checked(handler: Any) -> pd.DataFrame:
    """``check_handler(handler)``, computed once per handler and set of registered classes
    (a copy: a test may change what it gets)."""
    return _report(handler, tuple(SPECS.values())).copy()
