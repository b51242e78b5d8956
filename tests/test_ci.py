"""How CI spreads the suite over its workers: the modules sharing JupyterLab stay together."""

from __future__ import annotations

import re

from .conftest import ONE_WORKER, PACED, PACED_WORKERS, REPO, SHARED_STATE, one_worker_scope

BROWSER_MARK = re.compile(r"^pytestmark = .*pytest\.mark\.browser", re.M)


def test_every_module_marked_browser_runs_on_one_worker() -> None:
    marked = {p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py")
              if BROWSER_MARK.search(p.read_text("utf-8"))}
    folder = {p.relative_to(REPO).as_posix() for p in (REPO / ONE_WORKER).glob("test_*.py")}
    assert marked == folder and folder


def test_browser_tests_that_share_jupyterlab_share_one_scope_and_the_rest_are_spread() -> None:
    lab = ["tests/browser/test_browser_course.py::test_notebook_runs[01]",
           "tests/browser/test_browser.py::test_x", "tests/browser/test_browser_stepper.py::t"]
    assert {one_worker_scope(n) for n in lab} == {"browser-lab"}
    voila = ["tests/browser/test_voila.py::test_the_demo_renders",
             "tests/browser/test_voila.py::test_another"]
    assert {one_worker_scope(n) for n in voila} == {"tests/browser/test_voila.py"}
    assert one_worker_scope("tests/browser/test_stage.py::t") == "tests/browser/test_stage.py"
    others = ["tests/test_sse.py::test_a", "notebooks/01-anatomy.ipynb::01-anatomy.ipynb",
              "tests/test_fastpath.py::test_x[tests/browser/test_browser.py]"]
    assert [one_worker_scope(n) for n in others] == [None, None, None]


def test_a_module_sharing_a_process_state_stays_on_one_worker() -> None:
    assert SHARED_STATE and all((REPO / m).is_file() for m in SHARED_STATE)
    for module in SHARED_STATE:
        tests = [f"{module}::test_a", f"{module}::test_b[x]"]
        assert {one_worker_scope(n) for n in tests} == {module}


def test_the_paced_tests_are_split_evenly_and_the_same_way_every_time() -> None:
    tests = sorted({p.relative_to(REPO).as_posix() for p in (REPO / PACED).glob("test_*.py")})
    assert len(tests) > 2
    ids = [f"{m}::test_{i}[{j}]" for m in tests for i in range(20) for j in range(5)]
    scopes = [one_worker_scope(n) for n in ids]
    assert scopes == [one_worker_scope(n) for n in ids]
    shares = {s: scopes.count(s) for s in set(scopes)}
    assert len(shares) == PACED_WORKERS
    assert min(shares.values()) > len(ids) / PACED_WORKERS * 0.9, shares


def test_ci_runs_the_suite_with_that_distribution() -> None:
    make = (REPO / "Makefile").read_text("utf-8")
    assert "--dist loadgroup" in make and "make test" in (REPO / ".ci" / "run").read_text()


def test_no_test_module_imports_another_test_module() -> None:
    pattern = re.compile(  # from .test_x import y; import tests.test_x; from . import test_x
        r"^\s*(from\s+(\.+|tests\.)(\w+\.)*test_\w+\s+import|import\s+tests\.(\w+\.)*test_"
        r"|from\s+(\.+|tests)[\w.]*\s+import\s+\(?\s*([\w\s,]*,\s*)?test_\w+)", re.M)
    offenders = [p.name for p in (REPO / "tests").rglob("*.py")
                 if pattern.search(p.read_text("utf-8"))]
    assert offenders == []


def test_tests_mirror_the_package_layout() -> None:
    """A test folder is a subpackage of the library (or the browser course); helpers that
    tests share live in tests/support/ and nowhere else."""
    package = REPO / "streamcalls_lab"
    for folder in (p for p in (REPO / "tests").iterdir() if p.is_dir() and p.name not in (
            "__pycache__",)):
        if folder.name in ("support", "browser"):
            continue
        assert (package / folder.name / "__init__.py").is_file(), folder.name
    helpers = [p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("*.py")
               if not p.name.startswith("test_") and p.name not in ("__init__.py", "conftest.py")
               and p.parent.name != "support"]
    assert helpers == []
