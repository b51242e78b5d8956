"""Thin ipywidgets views over the kit's pure models; each also renders as static HTML.

- :class:`BreakerView` over :mod:`streamcalls_lab.breaker` (notebook 3);
- :class:`StageView`, the breaker one fault per scene on one screen (``make demo``);
- :class:`StepperView` over :class:`streamcalls_lab.Stepper` (notebook 4).
"""

from .breaker import BreakerView, Overview, overview
from .stage import StageView
from .stepper_view import StepperView

__all__ = ["BreakerView", "Overview", "StageView", "StepperView", "overview"]
