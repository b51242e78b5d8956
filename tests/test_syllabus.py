"""The path through the course is written once (notebooks/README.md), lists every notebook in
order with what it teaches, builds on and takes, and the static site's index shows it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from streamcalls_lab.course.syllabus import README, estimate, steps
from streamcalls_lab.static_site import Page, index_page

from .conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]-*.ipynb"))


def test_the_path_lists_every_notebook_once_in_order() -> None:
    path = steps()
    assert [s.notebook for s in path] == [p.name for p in NOTEBOOKS]
    assert [s.number for s in path] == [int(p.name[:2]) for p in NOTEBOOKS]


def test_every_step_says_what_it_teaches_builds_on_and_takes() -> None:
    for step in steps():
        assert step.teaches and step.builds_on and step.minutes > 0, step


def test_a_step_builds_only_on_notebooks_before_it() -> None:
    for step in steps():
        earlier = [int(n) for n in re.findall(r"\d+", step.builds_on)]
        assert all(n < step.number for n in earlier), step


def test_each_step_is_titled_as_its_notebook_is() -> None:
    for step in steps():
        first = nbformat.read(README.parent / step.notebook, as_version=4).cells[0].source
        assert first.splitlines()[0] == f"# {step.number} · {step.title}", step.notebook


def test_every_notebook_title_is_number_dot_title() -> None:
    for path in NOTEBOOKS:
        first = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]
        assert re.fullmatch(rf"# {int(path.name[:2])} · \S.*", first), (path.name, first)


def test_the_readme_times_are_the_estimates() -> None:
    """Within a quarter (or 5 minutes): `python -m streamcalls_lab.course.syllabus --write`
    brings them back in line after a notebook grows."""
    for step in steps():
        guess = estimate(README.parent / step.notebook).minutes
        assert abs(step.minutes - guess) <= max(5, guess // 4), (step.notebook, step.minutes,
                                                                 guess)


def test_the_readme_total_is_the_sum_of_its_times() -> None:
    total = sum(s.minutes for s in steps())
    text = README.read_text(encoding="utf-8")
    assert f"({total} minutes)" in text and f"About {round(total / 60)} hours" in text


def test_more_to_read_or_do_is_more_time(tmp_path: Path) -> None:
    short = new_notebook(cells=[new_markdown_cell("word " * 150), new_code_cell("x = 1")])
    longer = new_notebook(cells=[*short.cells, new_markdown_cell("word " * 600)])
    exercise = new_code_cell("check('a/b', x)")
    exercise.metadata["tags"] = ["exercise"]
    worked = new_notebook(cells=[*short.cells, exercise])
    times = []
    for name, nb in (("short", short), ("longer", longer), ("worked", worked)):
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
        e = estimate(tmp_path / f"{name}.ipynb")
        times.append(e.reading + e.doing)
    assert times[0] < times[1] and times[0] < times[2]


def test_the_site_index_shows_the_path_in_its_order(tmp_path: Path) -> None:
    pages = [Page(tmp_path / f"{p.stem}.html", p.stem, 0) for p in reversed(NOTEBOOKS)]
    page = index_page(pages, REPO / "data")
    at = [page.index(f'href="{p.stem}.html"') for p in NOTEBOOKS]
    assert at == sorted(at)
    for step in steps():
        assert f"about {step.minutes} min" in page
    assert f"about {sum(s.minutes for s in steps())} minutes" in page
