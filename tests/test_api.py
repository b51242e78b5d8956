"""The public API is ``__all__``: the package's and each subpackage's, each name importable,
nothing public left out, and the package's own list the one docs/contract.md documents."""

from __future__ import annotations
import __future__

import importlib
import pkgutil
import re
from types import ModuleType

import pytest

import streamcalls_lab

from .conftest import REPO

# Every package of the library, found on disk: a new one is held to the same rules unasked.
PACKAGES = ("streamcalls_lab", *sorted(
    m.name for m in pkgutil.walk_packages(streamcalls_lab.__path__, "streamcalls_lab.")
    if m.ispkg))
MODULES = sorted(m.name for m in pkgutil.walk_packages(streamcalls_lab.__path__,
                                                        "streamcalls_lab.")
                 if not m.name.endswith("__main__"))


def _namespace(name: str) -> set[str]:
    """The public names a package's namespace holds, as httpx's own test reads them: all but
    ``_`` names, its own submodules (bound there by any import of them, so every one is
    imported first), the ``__future__`` directive, and the helpers pytest's assertion rewriting
    adds to the modules of a distribution with a pytest plugin (``@py_builtins``)."""
    package = importlib.import_module(name)
    for sub in pkgutil.iter_modules(package.__path__):
        if sub.name != "__main__":
            importlib.import_module(f"{name}.{sub.name}")
    return {k for k, v in vars(package).items()
            if not k.startswith("_") and k.isidentifier()  # not pytest's @py_builtins
            and not (isinstance(v, ModuleType) and v.__name__ == f"{name}.{k}")
            and not isinstance(v, __future__._Feature)}


@pytest.mark.parametrize("name", PACKAGES)
def test_every_name_in_all_resolves_once(name: str) -> None:
    package = importlib.import_module(name)
    names = package.__all__
    assert len(names) == len(set(names)) and names
    assert all(hasattr(package, n) for n in names)
    space: dict[str, object] = {}
    exec(f"from {name} import *", space)
    assert sorted(k for k in space if k != "__builtins__") == sorted(names)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_the_package_namespace(name: str) -> None:
    """``__all__`` is exactly what the package's namespace holds (httpx pins its ``__all__`` to
    ``vars(httpx)`` the same way): a name imported into ``__init__`` and not listed, a helper
    defined there, a stray ``import os`` all fail here; what is internal is named with ``_``."""
    package = importlib.import_module(name)
    assert sorted(_namespace(name)) == sorted(package.__all__)


@pytest.mark.parametrize("name", MODULES)
def test_no_module_is_shadowed_by_a_name_of_its_package(name: str) -> None:
    """``import streamcalls_lab.x.y`` then ``streamcalls_lab.x.y`` is that module, never a
    function of the same name defined in the package (``calls``, ``torture.cases`` were)."""
    module = importlib.import_module(name)
    parent, _, leaf = name.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


def test_the_namespace_check_fails_on_an_unlisted_import(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above is not vacuous: a public name bound in the package and left out of
    ``__all__`` is found."""
    monkeypatch.setattr(streamcalls_lab, "helper", len, raising=False)
    assert "helper" in _namespace("streamcalls_lab") - set(streamcalls_lab.__all__)


def test_the_package_all_is_the_documented_api() -> None:
    import streamcalls_lab

    text = (REPO / "docs" / "contract.md").read_text("utf-8")
    section = text.split("## The public API", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^- `(\w+)`", section, re.M))
    assert documented == set(streamcalls_lab.__all__)


def test_importing_the_kit_loads_no_plotting_library() -> None:
    """`import streamcalls_lab` is paid by every kernel, CLI run and pytest worker: matplotlib
    (half a second of CPU) loads only where a figure is drawn (``plots``, ``display.static``
    of a figure), never for reading a stream."""
    import subprocess
    import sys

    code = ("import sys, streamcalls_lab, streamcalls_lab.display, streamcalls_lab.check; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    assert out.stdout.strip() == "[]", out.stdout
