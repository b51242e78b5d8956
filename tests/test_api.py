"""The public API is ``__all__``: the package's and each subpackage's, each name importable,
nothing public left out, and the package's own list the one docs/contract.md documents."""

from __future__ import annotations

import importlib
import re

import pytest

from .conftest import REPO

PACKAGES = ("streamcalls_lab", "streamcalls_lab.framing", "streamcalls_lab.traffic",
            "streamcalls_lab.producers",
            "streamcalls_lab.torture", "streamcalls_lab.providers", "streamcalls_lab.importers",
            "streamcalls_lab.widgets", "streamcalls_lab.course")


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
def test_nothing_public_is_left_out_of_all(name: str) -> None:
    """A public class or function the package's ``__init__`` defines is in ``__all__``."""
    package = importlib.import_module(name)
    public = {k for k, v in vars(package).items() if not k.startswith("_")
              and (isinstance(v, type) or callable(v)) and getattr(v, "__module__", "") == name}
    assert public <= set(package.__all__)


def test_the_package_all_is_the_documented_api() -> None:
    import streamcalls_lab

    text = (REPO / "docs" / "contract.md").read_text("utf-8")
    section = text.split("## The public API", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^- `(\w+)`", section, re.M))
    assert documented == set(streamcalls_lab.__all__)
