"""The course's exercises and predictions: checkers a notebook calls, kept in the library so
they are tested without a notebook (``tests/test_course.py``).

A notebook imports ``from streamcalls_lab.course import check, reveal, solution``; the
exercises of notebook ``NN`` live in a module of this package named for its topic, which
registers them with :func:`~.checking.exercise` when imported.
"""

from __future__ import annotations

import importlib as _importlib
import pkgutil as _pkgutil

from .checking import EXERCISES, Exercise, Prediction, Verdict, check, exercise, reveal, solution

__all__ = ["EXERCISES", "Exercise", "Prediction", "Verdict", "check", "exercise", "load_all",
           "reveal", "solution"]


def load_all() -> None:
    """Import every exercise module of the package, so :data:`EXERCISES` holds them all."""
    for mod in _pkgutil.iter_modules(__path__):
        if mod.name != "checking":
            _importlib.import_module(f"{__name__}.{mod.name}")
