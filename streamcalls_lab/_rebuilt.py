"""Turns an importer rebuilt from parsed chunks, and the warning analyses of the wire give.

``load()`` lists them in ``deltas.attrs["rebuilt"]`` (turn -> what its provenance says was
rebuilt): their fragment texts are exact, but their framing, escaping (``wire_chars``),
read boundaries and timing are the importer's, not the wire's. An analysis that measures
those calls :func:`warn_rebuilt`, so a figure is never taken for the wire's in silence.
"""

from __future__ import annotations

import warnings

import pandas as pd


class RebuiltWarning(UserWarning):
    """An analysis of the wire's own cuts looked at turns an importer rebuilt."""


def rebuilt_turns(deltas: pd.DataFrame) -> dict[str, str]:
    """The rebuilt turns among those ``deltas`` holds, with why each is rebuilt."""
    said = deltas.attrs.get("rebuilt")
    if not isinstance(said, dict) or not said:
        return {}
    present = set(deltas["turn"].unique()) if "turn" in deltas else set(said)
    return {t: why for t, why in said.items() if t in present}


def warn_rebuilt(deltas: pd.DataFrame, what: str) -> None:
    """Warn that ``what`` (a measure of the wire) includes rebuilt turns, naming a few."""
    turns = rebuilt_turns(deltas)
    if turns:
        names = ", ".join(sorted(turns)[:3]) + (" ..." if len(turns) > 3 else "")
        warnings.warn(f"{what}: {len(turns)} turn(s) were rebuilt by an importer ({names}): "
                      "their framing, escaping and reads are not the wire's",
                      RebuiltWarning, stacklevel=3)
