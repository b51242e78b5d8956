"""The pytest plugin's library side: cassettes (:mod:`.cassette`), the replaying server
(:mod:`.replayer`), re-cuts and producer variants (:mod:`.variants`) and the notebook-style
assertions (:mod:`.verdict`). The hooks and fixtures are the entry point
:mod:`streamcalls_lab_pytest`, which imports none of this until a test uses it.
"""

from __future__ import annotations

from .verdict import StreamcallsFailure, assert_calls, assert_client, assert_handler

__all__ = ["StreamcallsFailure", "assert_calls", "assert_client", "assert_handler"]
