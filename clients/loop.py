"""Loop mode for the Python adapters here: ``each_case(main)`` runs one case per call of
``main``, whichever way the torture harness runs the client.

A process per case (the default): ``main`` runs once, with the case in the environment. In
loop mode (``STREAMCALLS_LOOP=1``, ``check_client(..., loop=True)``, ``--loop``) the harness
writes one JSON line per case to stdin; for each, the case's variables go into
``os.environ``, ``main`` runs, and the end-of-case line ``{"end": N}`` follows its calls
(with ``"error"``: the last line of the traceback, when it raised). At EOF the loop ends.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # typing and traceback cost every client's start 25 ms of CPU each
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _failed(main: Callable[[], object]) -> dict[str, Any]:
    """Run ``main``; what its end line adds: nothing, or the exit code and error a process
    that let the exception out would have shown (its traceback still goes to stderr)."""
    try:
        main()
    except SystemExit as e:
        if e.code in (None, 0):
            return {}
        if isinstance(e.code, int):
            return {"exit": e.code}
        print(e.code, file=sys.stderr, flush=True)
        return {"exit": 1, "error": str(e.code)}
    except Exception as e:
        import traceback  # only a case that raised needs it

        text = "".join(traceback.format_exception(e))
        print(text, end="", file=sys.stderr, flush=True)
        return {"exit": 1, "error": text.strip().split("\n")[-1]}  # LF only: U+2028 is text
    return {}


def each_case(main: Callable[[], object]) -> None:
    """Run ``main`` once, or once per case line on stdin in the harness's loop mode."""
    if os.environ.get("STREAMCALLS_LOOP") != "1":
        main()
        return
    for line in sys.stdin:
        if line.strip():
            case = json.loads(line)
            os.environ.update(case["env"])
            end = {"end": case["case"], **_failed(main)}
            print(json.dumps(end), flush=True)
