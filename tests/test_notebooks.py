"""Notebook hygiene: stored clean, named for what they teach, and notebook 6 reads a HAR.

Executing every notebook is `pytest --nbmake notebooks` (in `make test`); here are the rules
a stored notebook must keep, plus the one run nbmake cannot do: pointing notebook 6 at a HAR.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from . import turns
from .conftest import REPO

NOTEBOOKS = REPO / "notebooks"
FOUND = sorted(NOTEBOOKS.glob("*.ipynb"))
NAME = re.compile(r"^(\d\d)-[a-z0-9]+(?:-[a-z0-9]+)*\.ipynb$")
EXPECTED = 7  # 07-torture-your-client (torture branch)
HERE_NOW = ("01-anatomy-of-a-streamed-turn", "02-fragment-size", "06-explore-your-captures")


def ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_the_first_half_of_the_course_is_there() -> None:
    assert set(HERE_NOW) <= set(ids(FOUND))


def test_the_glob_finds_every_notebook_of_the_course() -> None:
    assert len(FOUND) == EXPECTED


def test_notebook_numbers_are_unique_and_within_the_course() -> None:
    numbers = [int(p.name[:2]) for p in FOUND]
    assert len(set(numbers)) == len(numbers)
    assert set(numbers) <= set(range(1, EXPECTED + 1))


@pytest.mark.parametrize("path", FOUND, ids=ids(FOUND))
def test_notebook_name_is_number_then_kebab_title(path: Path) -> None:
    assert NAME.match(path.name)


@pytest.mark.parametrize("path", FOUND, ids=ids(FOUND))
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert dirty == []


@pytest.mark.parametrize("path", FOUND, ids=ids(FOUND))
def test_notebook_runs_on_the_python3_kernel(path: Path) -> None:
    assert nbformat.read(path, as_version=4).metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", FOUND, ids=ids(FOUND))
def test_notebook_is_valid_nbformat(path: Path) -> None:
    nbformat.validate(nbformat.read(path, as_version=4))


def har_with(tmp_path: Path, *bodies: bytes) -> Path:
    """A DevTools-style HAR: one event-stream entry per body, and one JSON entry to skip."""
    def entry(body: bytes, ctype: str) -> dict[str, object]:
        return {
            "startedDateTime": "2025-01-01T00:00:00Z",
            "request": {"method": "POST", "url": "https://example.invalid/v1/messages",
                        "headers": []},
            "response": {"status": 200, "headers": [{"name": "content-type", "value": ctype}],
                         "content": {"mimeType": ctype, "text": body.decode()}},
        }

    entries = [entry(b, "text/event-stream") for b in bodies]
    entries.append(entry(b'{"ok": true}', "application/json"))
    path = tmp_path / "devtools.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return path


def test_notebook_6_surveys_a_har_export(tmp_path: Path) -> None:
    """The HAR branch of notebook 6: its streams are imported, loaded and surveyed."""
    from nbclient import NotebookClient

    har = har_with(
        tmp_path,
        turns.anthropic(["Looking"], [("lookup", ['{"id": ', '"A-4', '471"}'])]),
        turns.anthropic([], [("lookup", ['{"id": "B'])], stop_calls=False),
    )
    nb = nbformat.read(NOTEBOOKS / "06-explore-your-captures.ipynb", as_version=4)
    env = {"STREAMCALLS_SOURCE": str(har), "MPLBACKEND": "Agg"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs if o.output_type == "stream")
    assert "2 event streams taken from devtools.har" in printed
    assert "2 turns" in printed and "2 calls" in printed
    tables = "".join(o.data.get("text/html", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.outputs if "data" in o)
    assert "missing_stop" in tables
