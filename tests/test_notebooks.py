"""Notebook hygiene: committed clean, named for what they teach, and notebook 6 reads a HAR.

Executing every notebook is `pytest --nbmake notebooks` (in `make test`); here are the rules
a stored notebook must keep, plus the one run nbmake cannot do: pointing notebook 6 at a HAR.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_output

from .conftest import REPO
from .support import turns

NOTEBOOKS = REPO / "notebooks"
FOUND = sorted(NOTEBOOKS.glob("*.ipynb"))
NAME = re.compile(r"^(\d\d)-[a-z0-9]+(?:-[a-z0-9]+)*\.ipynb$")
EXPECTED = 9  # 09-does-your-tracer-see-the-wire
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


def git(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def in_git_clone(repo: Path = REPO) -> bool:
    return shutil.which("git") is not None and git("rev-parse", cwd=repo).returncode == 0


def as_git_would_commit(path: Path, repo: Path = REPO) -> bytes:
    """The bytes `git add` would store for ``path``: the working file through its clean filter
    when this clone has one installed (`make lab` installs nbstripout), else the file itself."""
    rel = path.relative_to(repo).as_posix()
    attr = git("check-attr", "filter", "--", rel, cwd=repo).stdout.decode().rsplit(": ", 1)[-1]
    clean = git("config", f"filter.{attr.strip()}.clean", cwd=repo)
    if clean.returncode != 0:  # no filter named, or named but not installed: stored as is
        return path.read_bytes()
    with path.open("rb") as working:
        return subprocess.run(clean.stdout.decode().strip(), shell=True, cwd=repo, stdin=working,
                              capture_output=True, check=True).stdout


def cells_with_outputs(text: bytes | str) -> list[int]:
    nb = nbformat.reads(text, as_version=4)
    return [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]


@pytest.mark.parametrize("path", FOUND, ids=ids(FOUND))
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    """What the next commit would hold, so a reader who ran and saved the course still passes."""
    assert cells_with_outputs(as_git_would_commit(path)) == [], (
        f"{path.name} would be committed with outputs: run `make git-filter` (part of "
        "`make lab`) once, or strip them with `nbstripout`")


@pytest.mark.parametrize("path", FOUND, ids=ids(FOUND))
def test_notebook_is_staged_without_outputs(path: Path) -> None:
    """The index (in a fresh clone: the commit itself) holds the notebook stripped."""
    if not in_git_clone():
        pytest.skip("not a git clone")
    staged = git("show", f":{path.relative_to(REPO).as_posix()}")
    if staged.returncode != 0:
        pytest.skip(f"{path.name} is not tracked yet")
    assert cells_with_outputs(staged.stdout) == []


def run_and_save(clean: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``clean`` as JupyterLab saves it after Run All: outputs, counts, widget state, timings,
    the kernel's full language_info."""
    nb = copy.deepcopy(clean)
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
        cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00.000Z"}
        cell.metadata["scrolled"] = True
        cell.outputs = [
            new_output("stream", name="stdout", text="3 turns\n"),
            new_output("display_data", data={
                "text/plain": "BreakerView()", "text/html": "<b>still</b>",
                "application/vnd.jupyter.widget-view+json": {"model_id": "ab12", "version_major": 2,
                                                             "version_minor": 0}}),
            new_output("execute_result", data={"text/plain": "42"}, execution_count=n + 1),
        ]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.metadata["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
        "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3", "version": "3.11.9"}
    return nb


def test_make_lab_filter_commits_a_run_and_saved_notebook_unchanged(tmp_path: Path) -> None:
    """The Makefile's git-filter recipe in a fresh clone: save an executed notebook, and git
    sees no change at all (nothing to commit, nothing for the tests to trip on)."""
    if not in_git_clone() or not shutil.which("make"):
        pytest.skip("needs git and make")
    clone = tmp_path / "clone"
    (clone / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / ".gitattributes", clone)
    name = "notebooks/01-anatomy-of-a-streamed-turn.ipynb"
    clean = nbformat.read(REPO / name, as_version=4)
    nbformat.write(clean, clone / name)
    for args in (["init", "-q"], ["config", "user.email", "t@example.invalid"],
                 ["config", "user.name", "test"], ["config", "commit.gpgsign", "false"]):
        git(*args, cwd=clone)
    bin_dir = Path(sys.executable).parent
    made = subprocess.run(["make", "-s", "-f", str(REPO / "Makefile"), "git-filter",
                           f"BIN={bin_dir}"], cwd=clone, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert (clone / ".gitattributes").read_bytes() == (REPO / ".gitattributes").read_bytes()
    git("add", "-A", cwd=clone)
    assert git("commit", "-qm", "course", cwd=clone).returncode == 0

    nbformat.write(run_and_save(clean), clone / name)
    assert cells_with_outputs((clone / name).read_bytes())  # the working file has outputs
    # git status lists it until the next add (its size changed), yet there is no change:
    assert git("diff", "--quiet", "--no-textconv", cwd=clone).returncode == 0
    git("add", "-A", cwd=clone)
    assert git("diff", "--cached", "--quiet", cwd=clone).returncode == 0  # nothing to commit
    assert cells_with_outputs(as_git_would_commit(clone / name, clone)) == []


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


def test_notebook_7_under_make_labs_install_says_the_sdk_is_missing(tmp_path: Path,
                                                                     monkeypatch) -> None:
    """Where an SDK is missing (an install without the `clients` extra, which `make lab` has),
    notebook 7 must say the openai package is missing and how to install it (no bug classes
    for it), and still run the reference client. A package that raises ModuleNotFoundError on
    import stands in for the missing one."""
    from nbclient import NotebookClient

    shim = tmp_path / "without-sdks" / "openai"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'openai'\", name='openai')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(shim.parent), os.environ.get("PYTHONPATH")) if p))
    nb = nbformat.read(NOTEBOOKS / "07-torture-your-client.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs if o.output_type == "stream")
    assert ("The client did not start: it imports the Python module 'openai', which is not "
            "installed where it runs") in printed
    assert "python -m pip install openai" in printed and '".[clients]"' in printed
    tables = "".join(o.data.get("text/html", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.outputs if "data" in o)
    assert "key_by_last" in tables  # the reference client's broken variant ran, and was caught
    assert "crash" not in tables and "lost_on_truncation" not in tables
