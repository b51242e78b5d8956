"""Every notebook of the course ends with a short recall questionnaire, and every question has
its answer in the notebook's file under ``notebooks/solutions/``."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from .conftest import REPO

COURSE = sorted((REPO / "notebooks").glob("[0-9][0-9]-*.ipynb"))
_ITEM = re.compile(r"^(\d+)\. ", re.M)
_LINK = re.compile(r"\]\((solutions/[^)#]+\.md)#recall\)")


def _numbered(text: str) -> list[int]:
    return [int(n) for n in _ITEM.findall(text)]


def _recall_section(markdown: str) -> str:
    parts = re.split(r"^## Recall\s*$", markdown, flags=re.M)
    assert len(parts) == 2, "no single '## Recall' section"
    return re.split(r"^#{1,2} ", parts[1], flags=re.M)[0]


@pytest.mark.parametrize("path", COURSE, ids=[p.stem for p in COURSE])
def test_the_notebook_ends_with_recall_questions_answered_in_solutions(path: Path) -> None:
    last = nbformat.read(path, as_version=4).cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## Recall"), path.name
    questions = _numbered(last.source)
    assert 4 <= len(questions) <= 6 and questions == list(range(1, len(questions) + 1))
    link = _LINK.search(last.source)
    assert link is not None and link.group(1) == f"solutions/{path.stem}.md"
    answers = _recall_section((path.parent / link.group(1)).read_text(encoding="utf-8"))
    assert _numbered(answers) == questions
    # each answer repeats its question, so the two files cannot drift apart unseen
    for line in last.source.splitlines():
        if _ITEM.match(line):
            assert line.split(". ", 1)[1] in answers, line


def test_every_solutions_file_belongs_to_a_notebook() -> None:
    stems = {p.stem for p in COURSE}
    assert {p.stem for p in (REPO / "notebooks" / "solutions").glob("*.md")} <= stems
