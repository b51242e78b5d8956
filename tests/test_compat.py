"""Import paths of 0.1 keep working for one release: each warns and hands back the new objects."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

import streamcalls_lab
from streamcalls_lab import MOVED, decode, loader
from streamcalls_lab.framing import sse
from streamcalls_lab.traffic import proxy


def _forget(old: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """As if ``old`` had never been imported (a module and its parent's attribute), put back
    as it was after the test: an old path named like a function (``calls``) binds its module
    over that function, and the rest of the session must see the function again."""
    monkeypatch.delitem(sys.modules, f"streamcalls_lab.{old}", raising=False)
    parent, _, name = f"streamcalls_lab.{old}".rpartition(".")
    package = importlib.import_module(parent)
    held = getattr(package, name, None)
    if held is not None:
        monkeypatch.setattr(package, name, held)
        if isinstance(held, type(sys)):
            delattr(package, name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_naming_where_it_moved(old: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _forget(old, monkeypatch)
    with pytest.warns(DeprecationWarning, match=f"moved to streamcalls_lab.{MOVED[old][0]}"):
        module = importlib.import_module(f"streamcalls_lab.{old}")
    home = importlib.import_module(f"streamcalls_lab.{MOVED[old][0]}")
    shared = [k for k in vars(home) if not k.startswith("__")]
    assert shared and all(getattr(module, k) is getattr(home, k) for k in shared)


def test_an_old_path_gives_the_same_objects_as_the_new_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _forget("deltas", monkeypatch)
    with pytest.warns(DeprecationWarning):
        from streamcalls_lab import deltas
    assert deltas.load is loader.load and deltas.EventDecoder is decode.EventDecoder
    _forget("sse", monkeypatch)
    with pytest.warns(DeprecationWarning):
        from streamcalls_lab.sse import Frame, SSEDecoder, sse_frame  # noqa: F401
    assert SSEDecoder is sse.SSEDecoder
    _forget("proxy", monkeypatch)
    with pytest.warns(DeprecationWarning):
        from streamcalls_lab.proxy import RecordingProxy
    assert RecordingProxy is proxy.RecordingProxy


def test_an_old_path_named_like_a_function_still_calls_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``import streamcalls_lab.calls`` (0.2's module) binds a module where the function
    ``streamcalls_lab.calls`` was; code that then calls ``streamcalls_lab.calls(...)`` gets
    the function's answer, not ``TypeError: 'module' object is not callable``."""
    function = streamcalls_lab.calls
    _forget("calls", monkeypatch)
    with pytest.warns(DeprecationWarning, match="moved to streamcalls_lab._calls"):
        importlib.import_module("streamcalls_lab.calls")
    bound = streamcalls_lab.calls
    assert bound is not function and bound.calls is function
    turn = (b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
            b'"type":"function","function":{"name":"f","arguments":"{}"}}]}}]}\n\n'
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
            b"data: [DONE]\n\n")
    assert bound([turn])["args"].tolist() == function([turn])["args"].tolist() == ["{}"]


def _imported_by_name(old: str, text: str) -> bool:
    """``from streamcalls_lab import inflate``: the old module imported from its package (a
    name its package exports, as ``calls`` the function, is no such import)."""
    parent, _, leaf = f"streamcalls_lab.{old}".rpartition(".")
    if leaf in importlib.import_module(parent).__all__:
        return False
    pattern = rf"^\s*from {re.escape(parent)} import (\([^)]*\)|[^\n]*)"
    for names in re.findall(pattern, text, re.M):
        imported = [n.split(" as ")[0].strip() for n in names.strip("()").split(",")]
        if leaf in imported:
            return True
    return False


def test_an_old_module_imported_from_its_package_is_found() -> None:
    assert _imported_by_name("inflate", "from streamcalls_lab import cli, inflate, load\n")
    assert not _imported_by_name("inflate", "from streamcalls_lab import _inflate as inflate\n")
    assert not _imported_by_name("calls", "from streamcalls_lab import calls\n")


def test_no_old_path_is_still_a_file_and_no_new_code_uses_one() -> None:
    root = loader.__file__.rsplit("/", 1)[0]
    from pathlib import Path
    package = Path(root)
    for old in MOVED:
        assert not (package / f"{old.replace('.', '/')}.py").exists(), old
    used = []
    repo = package.parent
    files = [*package.rglob("*.py"), *(repo / "tests").rglob("*.py"),
             *(repo / "scripts").glob("*.py"), *(repo / "benchmarks").glob("*.py"),
             *(repo / "clients").glob("*.py"), *(repo / "notebooks").glob("*.ipynb")]
    for path in files:
        if path.name in ("test_compat.py", "__init__.py") and path.parent == package:
            continue
        text = path.read_text("utf-8")
        for old in MOVED:
            if (f"streamcalls_lab.{old} " in text or f"streamcalls_lab.{old}\n" in text
                    or f"streamcalls_lab.{old} import" in text or _imported_by_name(old, text)):
                used.append(f"{path.relative_to(repo)}: {old}")
    assert [u for u in used if not u.startswith("tests/test_compat.py")] == []


def test_the_finder_is_installed_once() -> None:
    importlib.reload(streamcalls_lab)
    assert sum(type(f).__qualname__ == "_MovedModules" for f in sys.meta_path) == 1
