"""The path through the course, written once: the table in ``notebooks/README.md`` (what each
notebook teaches, what it builds on, how long it takes), which the static site's index reads.

The times are estimates from what a notebook holds (:func:`estimate`; the README says how),
not a measurement of students; ``python -m streamcalls_lab.course.syllabus`` prints each
notebook's estimate beside the README's figure, and ``--write`` puts the estimates in.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["README", "Estimate", "Step", "estimate", "steps"]

README = Path(__file__).resolve().parents[2] / "notebooks" / "README.md"
"""The course's path (absent from an installed wheel, as the notebooks are)."""

# The reading and doing model (notebooks/README.md states it): words of prose read closely, at
# 150 a minute (below the 238 of silent non-fiction reading in Brysbaert 2019, J. Mem. Lang.
# 109, since this is technical text read with the output beside it); 10 lines of code a
# minute, and a minute per code cell for its output; then what the student does.
WORDS_PER_MINUTE = 150
CODE_LINES_PER_MINUTE = 10
MINUTES_PER_OUTPUT = 1
MINUTES_PER = {"predict": 2, "exercise": 8, "widget": 3, "try": 3}
_WIDGET = re.compile(r"\b\w*View\(|\bStepper\w*\(")
_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*\[([^\]]+)\]\(([^)]+\.ipynb)\)\s*\|(.*)\|\s*$")


@dataclass(frozen=True, slots=True)
class Step:
    """One notebook on the path, as the README's table gives it."""

    number: int
    notebook: str
    title: str
    teaches: str
    builds_on: str
    minutes: int


@dataclass(frozen=True, slots=True)
class Estimate:
    """How long a notebook takes, by the model above: ``reading`` and ``doing`` in minutes,
    and ``minutes``, their sum rounded up to the next 5."""

    reading: float
    doing: float
    minutes: int


def steps(readme: Path = README) -> list[Step]:
    """The rows of the README's path table, in order."""
    out = []
    for line in readme.read_text(encoding="utf-8").splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        teaches, builds_on, time = (c.strip() for c in row.group(4).split("|"))
        minutes = re.fullmatch(r"(\d+) min", time)
        if minutes is None:
            raise ValueError(f"{readme}: the time of notebook {row.group(1)} is {time!r}, "
                             "not 'N min'")
        out.append(Step(int(row.group(1)), row.group(3), row.group(2).strip(), teaches,
                        builds_on, int(minutes.group(1))))
    return out


def estimate(path: Path) -> Estimate:
    """The reading and doing time of the notebook at ``path``, by the model above."""
    import nbformat  # here, not at the top: check() imports this module, and nbformat costs 1 s

    nb = nbformat.read(path, as_version=4)
    words = lines = outputs = 0
    doing = 0.0
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        doing += sum(MINUTES_PER[t] for t in ("predict", "exercise") if t in tags)
        if cell.cell_type == "markdown":
            words += len(cell.source.split())
            if "## Try it" in cell.source:
                doing += MINUTES_PER["try"] * len(re.findall(r"^- ", cell.source, re.M))
        elif cell.cell_type == "code":
            outputs += 1
            lines += sum(1 for ln in cell.source.splitlines()
                         if ln.strip() and not ln.strip().startswith("#"))
            if _WIDGET.search(cell.source):
                doing += MINUTES_PER["widget"]
    reading = (words / WORDS_PER_MINUTE + lines / CODE_LINES_PER_MINUTE
               + outputs * MINUTES_PER_OUTPUT)
    return Estimate(round(reading, 1), doing, 5 * math.ceil((reading + doing) / 5))


def _write(readme: Path, estimates: dict[str, int]) -> None:
    lines = []
    for line in readme.read_text(encoding="utf-8").splitlines():
        row = _ROW.match(line)
        if row is not None and row.group(3) in estimates:
            line = re.sub(r"\|\s*\d+ min\s*\|$", f"| {estimates[row.group(3)]} min |", line)
        lines.append(line)
    total = sum(estimates.values())
    text = re.sub(r"About \d+ hours in all \(\d+ minutes\)",
                  f"About {round(total / 60)} hours in all ({total} minutes)", "\n".join(lines))
    readme.write_text(text + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    path = steps()
    found = {s.notebook: estimate(README.parent / s.notebook) for s in path}
    for step in path:
        e = found[step.notebook]
        print(f"{step.number:>2} {step.notebook:<42} README {step.minutes:>3} min, estimate "
              f"{e.minutes:>3} min (reading {e.reading:g}, doing {e.doing:g})")
    if "--write" in args:
        _write(README, {name: e.minutes for name, e in found.items()})
        print(f"wrote the estimates into {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
