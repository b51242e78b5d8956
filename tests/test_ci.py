"""How CI spreads the suite over its workers: the modules sharing JupyterLab stay together."""

from __future__ import annotations

import ast
import re

from .conftest import (
    IN_PROCESS_SDKS,
    ONE_WORKER,
    PACED,
    PACED_WORKERS,
    REPO,
    SDK_SCOPE,
    SDKS,
    SHARED_STATE,
    one_worker_scope,
)

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


def _sdk_imports(tree: ast.AST) -> list[ast.AST]:
    """Every import of one of ``SDKS`` in ``tree``, importorskip included."""
    def names(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        if isinstance(node, ast.ImportFrom) and not node.level:
            return [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip"
                and node.args and isinstance(node.args[0], ast.Constant)):
            return [str(node.args[0].value)]
        return []
    return [n for n in ast.walk(tree)
            if any(m == s or m.startswith(s + ".") for m in names(n) for s in SDKS)]


def _runs_an_sdk(tree: ast.Module) -> set[str]:
    """The module's functions that import an SDK, or call one of its own that does."""
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    found = {name for name, f in funcs.items() if _sdk_imports(f)}
    while more := {name for name, f in funcs.items() if name not in found and any(
            isinstance(n, ast.Name) and n.id in found for n in ast.walk(f))}:
        found |= more
    return found


def test_the_sdks_are_imported_only_where_used_and_only_in_their_scope() -> None:
    trees = {p.relative_to(REPO).as_posix(): ast.parse(p.read_text("utf-8"))
             for p in (REPO / "tests").rglob("*.py")}
    at_top = [m for m, tree in trees.items() for node in tree.body  # TYPE_CHECKING's kept
              if isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.Expr)
              and _sdk_imports(node)]
    assert at_top == []
    helpers = {m.removeprefix("tests/support/").removesuffix(".py"): _runs_an_sdk(tree)
               for m, tree in trees.items() if m.startswith("tests/support/")}
    using = set()
    for m, tree in trees.items():
        if not m.split("/")[-1].startswith("test_"):
            continue
        via = False
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("support"):
                module = n.module.removeprefix("support").lstrip(".")
                via |= any(a.name in helpers.get(module, ()) if module  # a helper by name
                           else bool(helpers.get(a.name)) for a in n.names)  # or its module
        if _sdk_imports(tree) or via:
            using.add(m)
    assert using == IN_PROCESS_SDKS
    assert {one_worker_scope(f"{m}::test_x") for m in IN_PROCESS_SDKS} == {SDK_SCOPE}


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
