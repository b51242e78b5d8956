"""streamcalls_lab: load, measure and break streamed LLM tool calls."""

from .accumulate import Accumulator
from .calls import calls
from .deltas import frames, load
from .errors import CaptureError

__all__ = ["Accumulator", "CaptureError", "calls", "frames", "load"]
