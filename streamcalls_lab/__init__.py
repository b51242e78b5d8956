"""streamcalls_lab: load, measure and break streamed LLM tool calls.

``__all__`` is the public API (``docs/contract.md``); everything else is reached through
its module. Modules moved in 0.2 keep their old import path for one release: importing
one warns (``DeprecationWarning``) and hands back the module it moved to.
"""

import importlib as _importlib
import importlib.abc as _abc
import importlib.machinery as _machinery
import importlib.util as _util
import sys as _sys
import warnings as _warnings
from types import ModuleType as _ModuleType

from ._calls import calls
from .accumulate import Accumulator
from .check import check_handler
from .dataset import duckdb, to_parquet
from .errors import CaptureError
from .faults import FAULTS
from .loader import frames, load
from .prefixes import prefix_parses, prefix_summary, where_it_bites
from .producers import anomalies, diff
from .stepper import Step, Stepper

__all__ = [
    "FAULTS", "MOVED", "Accumulator", "CaptureError", "Step", "Stepper", "anomalies", "calls",
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
    "bulk": ("_fastpath",),
    "deltas": ("loader", "decode"),
    "diagnose": ("providers.unknown", "framing.containers"),
    "batch": ("sources",),
    "playback": ("stepper",),
    "origin": ("corpus",),
    "loopback": ("traffic.server",),
    "body_recorder": ("traffic._saving",),
    "proxy": ("traffic.proxy",),
    "serve": ("traffic.serve",),
    "record": ("traffic.record",),
    "replay": ("traffic.replay",),
    "providers.sniffing": ("providers.recognise",),
    "providers.wire": ("providers.as_written",),
    "providers.spans": ("providers.as_written",),
    # 0.3: internal modules marked with "_", and none named like the function it defines
    "calls": ("_calls",),
    "fastpath": ("_fastpath",),
    "columns": ("_columns",),
    "deepjson": ("_deepjson",),
    "inflate": ("_inflate",),
    "rebuilt": ("_rebuilt",),
    "producers.conform": ("producers._conform",),
    "producers.diff": ("producers._diff",),
    "torture.cases": ("torture._cases",),
    "torture.judge": ("torture._judge",),
    "torture.processes": ("torture._processes",),
    "traffic.http1": ("traffic._http1",),
    "traffic.saving": ("traffic._saving",),
}
"""Import paths of 0.1 that still work, for one release, with a ``DeprecationWarning``."""


class _CallableModule(_ModuleType):
    """An old module path named like a function of its package (``calls``, ``torture.cases``).

    Importing it binds the module over the package's function of that name; calling it still
    calls that function, so code that mixes the old path and the new API keeps working.
    """

    __call_target__: object

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.__call_target__(*args, **kwargs)  # type: ignore[operator]


class _MovedModules(_abc.MetaPathFinder, _abc.Loader):
    """Finds ``streamcalls_lab.<old>`` and gives a module holding the names of its new home."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> _machinery.ModuleSpec | None:
        old = fullname.removeprefix(f"{__name__}.")
        if old == fullname or old not in MOVED:
            return None
        return _util.spec_from_loader(fullname, self)

    def exec_module(self, module: _ModuleType) -> None:
        old = module.__name__.removeprefix(f"{__name__}.")
        homes = [_importlib.import_module(f"{__name__}.{new}") for new in MOVED[old]]
        parent, _, leaf = module.__name__.rpartition(".")
        held = getattr(_sys.modules[parent], leaf, None)
        held = held.__call_target__ if isinstance(held, _CallableModule) else held
        if callable(held) and not isinstance(held, _ModuleType):
            module.__class__ = _CallableModule
            module.__call_target__ = held
        _warnings.warn(f"{module.__name__} moved to "
                      f"{' and '.join(h.__name__ for h in homes)}; the old path goes in the "
                      "next release", DeprecationWarning, stacklevel=2)
        for home in reversed(homes):  # the first home wins a name both have
            module.__dict__.update({k: v for k, v in vars(home).items()
                                    if not (k.startswith("__") and k.endswith("__"))})
        module.__doc__ = f"Moved: see {homes[0].__name__}."


if not any(type(f).__qualname__ == _MovedModules.__qualname__ for f in _sys.meta_path):
    _sys.meta_path.append(_MovedModules())
