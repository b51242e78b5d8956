"""The course states each notebook's study time once, as the path's table has it, and cites
no tracker of the kit's own making (a reader has no "issue 23" to look up)."""

from __future__ import annotations

import json
import re

import pytest

from streamcalls_lab.course.syllabus import README, Step, steps

NOTEBOOKS = README.parent
STATED = re.compile(r"\bAbout (\d+) minutes\b")
INTERNAL = re.compile(r"\b(?:issue|ticket)s? #?\d+\b", re.IGNORECASE)


def prose(notebook: str) -> str:
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("step", steps(), ids=lambda s: s.notebook)
def test_a_notebook_that_states_its_time_states_the_paths_figure(step: Step) -> None:
    stated = {int(m) for m in STATED.findall(prose(step.notebook))}
    assert stated <= {step.minutes}, (step.notebook, stated, step.minutes)


@pytest.mark.parametrize("step", steps(), ids=lambda s: s.notebook)
def test_no_notebook_cites_an_internal_issue(step: Step) -> None:
    found = INTERNAL.findall(prose(step.notebook))
    assert found == [], found
