"""Deprecated alias: ``load()`` lives in :mod:`.loader`, the event decoder in :mod:`.decode`.

Kept so that code written against the old module path (``deltas.load_captures`` was
documented) keeps working; it warns once on import.
"""

import warnings

from .decode import UNKNOWN, Decoded, EventDecoder
from .loader import COLUMNS, events_frame, frames, gc_paused, load, load_captures

warnings.warn(
    "streamcalls_lab.deltas is deprecated: import load/load_captures from streamcalls_lab.loader"
    " and EventDecoder from streamcalls_lab.decode",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "COLUMNS", "UNKNOWN", "Decoded", "EventDecoder", "events_frame", "frames", "gc_paused",
    "load", "load_captures",
]
