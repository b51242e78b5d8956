"""The course teaches: every notebook opens with goals, closes with a recap, and has a
``predict`` cell and an ``exercise`` cell whose checker accepts the worked solution and
rejects a wrong answer (``streamcalls_lab/course/checking.py`` states the convention)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from streamcalls_lab.course import EXERCISES, Verdict, check, load_all, reveal, solution

from .conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]-*.ipynb"))
CHECKED = re.compile(r"""\bcheck\(\s*["']([^"']+)["']""")


def _tagged(nb: nbformat.NotebookNode, tag: str) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_opens_with_its_goals(path: Path) -> None:
    first = _read(path).cells[0]
    assert first.cell_type == "markdown" and "## Goals" in first.source, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_closes_with_a_recap(path: Path) -> None:
    # then its recall questions, the very last cell (tests/test_course_recall.py)
    *_, recap, recall = [c for c in _read(path).cells if c.cell_type == "markdown"]
    assert "## Recap" in recap.source and recall.source.startswith("## Recall"), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_has_a_predict_cell_before_its_reveal(path: Path) -> None:
    nb = _read(path)
    predicts = _tagged(nb, "predict")
    assert predicts, f"{path.name} has no cell tagged predict"
    for cell in predicts:
        later = nb.cells[nb.cells.index(cell) + 1:]
        assert any(c.cell_type == "code" and "reveal(" in c.source for c in later), (
            f"{path.name}: a predict cell with no computed reveal after it")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_has_an_exercise_its_checker_knows(path: Path) -> None:
    load_all()
    names = [n for c in _tagged(_read(path), "exercise") for n in CHECKED.findall(c.source)]
    assert names, f"{path.name} has no cell tagged exercise that calls check(name, ...)"
    assert set(names) <= set(EXERCISES), sorted(set(names) - set(EXERCISES))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_solution_is_shown_above_its_exercise(path: Path) -> None:
    nb = _read(path)
    for cell in _tagged(nb, "exercise"):
        above = nb.cells[:nb.cells.index(cell)]
        for name in CHECKED.findall(cell.source):
            assert not any(f"solution({name!r}" in c.source or f'solution("{name}"' in c.source
                           for c in above), (path.name, name)


def _exercises() -> list[str]:
    load_all()
    return sorted(EXERCISES)


@pytest.mark.parametrize("name", _exercises())
def test_a_checker_accepts_the_worked_solution(name: str) -> None:
    verdict = check(name, solution(name).answer)
    assert isinstance(verdict, Verdict) and verdict.right, verdict


@pytest.mark.parametrize("name", _exercises())
def test_a_checker_rejects_every_wrong_answer_and_says_why(name: str) -> None:
    wrong = EXERCISES[name].wrong
    assert wrong, f"{name} lists no wrong answer to test its checker with"
    for answer in wrong:
        verdict = check(name, answer)
        assert not verdict.right and verdict.why, (name, answer)


@pytest.mark.parametrize("name", [n for n in _exercises() if EXERCISES[n].unanswered])
def test_an_answer_still_none_is_asked_for_not_checked(name: str) -> None:
    verdict = check(name, None)
    assert not verdict.right
    assert verdict.why == f"no answer yet: {EXERCISES[name].unanswered}"


def test_an_answer_of_the_wrong_shape_is_wrong_not_a_crash() -> None:
    for name in _exercises():
        assert not check(name, object()).right


def test_an_unknown_exercise_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match="no exercise named"):
        check("no-such/exercise", 1)


def test_a_reveal_without_a_prediction_asks_for_one_and_hides_the_answer() -> None:
    shown = reveal("How many?", None, 317, "three hundred and seventeen calls")
    assert "No prediction yet" in repr(shown) and "317" not in repr(shown)
    bundle = shown._repr_mimebundle_()
    assert "317" not in str(bundle) and "seventeen" not in str(bundle)  # not even in the page
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_the_show_button_reveals_the_answer_on_click_only() -> None:
    import ipywidgets as w

    box = reveal("How many?", None, 317, "three hundred and seventeen calls").widget()
    assert isinstance(box, w.VBox)
    asked, button, answer = box.children
    assert answer.value == "" and "317" not in asked.value
    button.click()
    assert "317" in answer.value and "seventeen" in answer.value


def test_a_reveal_with_a_prediction_says_the_answer() -> None:
    shown = repr(reveal("How many?", 3, 317, "many"))
    assert "You predicted 3; not quite" in shown and "317" in shown


def test_a_reveal_compares_the_prediction_with_the_data() -> None:
    assert reveal("q", 2, 3, "").agree is False
    assert reveal("q", 3, 3, "").agree is True
    assert reveal("q", 0.9, 0.91, "", agree=lambda p, a: abs(p - a) < 0.05).agree is True
