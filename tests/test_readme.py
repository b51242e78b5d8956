"""The README a newcomer reads first: its set-up commands, its links and its map of the library."""

from __future__ import annotations

import os
import re

from .conftest import REPO

README = (REPO / "README.md").read_text("utf-8")
PACKAGE = REPO / "streamcalls_lab"


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else None]


def test_the_set_up_has_exactly_two_commands_and_ci_runs_the_second() -> None:
    block = re.search(r"```sh\n(.*?)```", _section("Set up (a fresh machine with Python 3.11+ "
                                                    "and `make`)"), re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert [c for c in commands if c] == ["make lab", "make test"]
    assert (REPO / ".ci" / "run").read_text("utf-8").strip().endswith("make test")


def test_every_module_and_subpackage_is_on_the_map() -> None:
    where = _section("What is where")
    named = set(re.findall(r"`([\w/]+(?:\.py|/))`", where))
    modules = {p.name for p in PACKAGE.glob("*.py")}
    packages = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    inside = {p.name for pkg in PACKAGE.iterdir() if (pkg / "__init__.py").exists()
              for p in pkg.glob("*.py") if p.name != "__init__.py"}
    # a subpackage's own modules are named in its row; the format modules by the pattern
    inside -= {p.name for p in (PACKAGE / "providers").glob("*.py")
               if "FORMAT =" in p.read_text("utf-8")}
    assert sorted((modules - {"__init__.py"}) - named) == []
    assert sorted(packages - named) == []
    assert sorted(inside - named) == []


def _file_names() -> set[str]:
    """The names of the project's files, in one walk that skips what is not the project's
    (the virtual environment, node_modules, caches): globbing the checkout once per name
    walked the whole venv each time (150 s of a CI run)."""
    names: set[str] = set()
    for _root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".")
                   and d not in ("node_modules", "__pycache__", "build")]
        names.update(files)
    return names


def test_the_map_names_nothing_that_is_not_there() -> None:
    where = _section("What is where")
    names = _file_names()
    for name in set(re.findall(r"`([\w]+\.py)`", where)):
        assert name in names, name


def test_every_local_link_resolves() -> None:
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", README):
        assert (REPO / target).exists(), target
