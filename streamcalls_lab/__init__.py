"""streamcalls_lab: load, measure and break streamed LLM tool calls.

``__all__`` is the public API (``docs/contract.md``); everything else is reached through
its module. Modules moved in 0.2 keep their old import path for one release: importing
one warns (``DeprecationWarning``) and hands back the module it moved to.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

from .accumulate import Accumulator
from .calls import calls
from .check import check_handler
from .dataset import duckdb, to_parquet
from .errors import CaptureError
from .faults import FAULTS
from .loader import frames, load
from .prefixes import prefix_parses, prefix_summary, where_it_bites
from .producers import anomalies, diff
from .stepper import Step, Stepper

__all__ = [
    "FAULTS", "Accumulator", "CaptureError", "Step", "Stepper", "anomalies", "calls",
    "check_handler", "diff", "duckdb", "frames", "load", "prefix_parses", "prefix_summary",
    "to_parquet", "where_it_bites",
]

MOVED: dict[str, tuple[str, ...]] = {
    # old module: where its names live now (looked up in this order)
    "sse": ("framing.sse", "framing.frame"),
    "ndjson": ("framing.ndjson",),
    "jsonarray": ("framing.jsonarray",),
    "eventstream": ("framing.eventstream", "framing"),
    "encode": ("framing.sse", "framing.eventstream"),
    "bulk": ("fastpath",),
    "deltas": ("loader", "decode"),
    "diagnose": ("providers.unknown", "framing.containers"),
    "batch": ("sources",),
    "playback": ("stepper",),
    "origin": ("corpus",),
    "loopback": ("traffic.server",),
    "body_recorder": ("traffic.saving",),
    "proxy": ("traffic.proxy",),
    "serve": ("traffic.serve",),
    "record": ("traffic.record",),
    "replay": ("traffic.replay",),
    "providers.sniffing": ("providers.recognise",),
    "providers.wire": ("providers.as_written",),
    "providers.spans": ("providers.as_written",),
}
"""Import paths of 0.1 that still work, for one release, with a ``DeprecationWarning``."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``streamcalls_lab.<old>`` and gives a module holding the names of its new home."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        old = fullname.removeprefix(f"{__name__}.")
        if old == fullname or old not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__.removeprefix(f"{__name__}.")
        homes = [importlib.import_module(f"{__name__}.{new}") for new in MOVED[old]]
        warnings.warn(f"{module.__name__} moved to "
                      f"{' and '.join(h.__name__ for h in homes)}; the old path goes in the "
                      "next release", DeprecationWarning, stacklevel=2)
        for home in reversed(homes):  # the first home wins a name both have
            module.__dict__.update({k: v for k, v in vars(home).items()
                                    if not (k.startswith("__") and k.endswith("__"))})
        module.__doc__ = f"Moved: see {homes[0].__name__}."


if not any(type(f).__qualname__ == _MovedModules.__qualname__ for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())
