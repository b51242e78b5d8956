"""streamcalls_lab: load, measure and break streamed LLM tool calls."""

from .accumulate import Accumulator
from .calls import calls
from .check import check_handler
from .errors import CaptureError
from .faults import FAULTS
from .loader import frames, load
from .prefixes import prefix_parses, prefix_summary, where_it_bites
from .stepper import Step, Stepper

__all__ = [
    "FAULTS", "Accumulator", "CaptureError", "Step", "Stepper", "calls", "check_handler",
    "frames", "load", "prefix_parses", "prefix_summary", "where_it_bites",
]
