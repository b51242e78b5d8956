"""The catalogue of the real clients (streamcalls_lab/torture/clients.toml) is the whole of
clients/: a script added there and not catalogued (or a catalogued one removed) fails here, and
what an entry says it needs is what its script imports."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from streamcalls_lab.check import TURN_FORMATS
from streamcalls_lab.torture import (
    CLIENT_HELPERS,
    CLIENT_PACKAGES,
    CLIENTS_DIR,
    REAL_CLIENTS,
    RealClient,
    install_hint,
    read_clients,
)

from ..conftest import REPO

# clients/ folders that hold other programs, with their own table: the traced programs of
# docs/tracers.md (tests/tracing/test_live.py runs them), not torture clients.
OTHER_PROGRAMS = {"tracers"}
SUFFIXES = (".py", ".mjs")


def _scripts_on_disk() -> set[str]:
    """Every .py and .mjs file under clients/, as a path under it, but installed packages."""
    return {p.relative_to(CLIENTS_DIR).as_posix() for p in CLIENTS_DIR.rglob("*")
            if p.suffix in SUFFIXES and p.is_file()
            and not {"node_modules", "__pycache__"} & set(p.relative_to(CLIENTS_DIR).parts)
            and p.relative_to(CLIENTS_DIR).parts[0] not in OTHER_PROGRAMS}


def test_the_catalogue_is_read_from_the_checkouts_clients() -> None:
    assert REPO / "clients" == CLIENTS_DIR


def test_every_script_under_clients_is_a_catalogued_client_or_a_helper() -> None:
    on_disk = _scripts_on_disk()
    assert "vercel/client.mjs" in on_disk and "reference.py" in on_disk  # the walk finds them
    assert on_disk - set(REAL_CLIENTS) - set(CLIENT_HELPERS) == set(), (
        "add each to streamcalls_lab/torture/clients.toml (a client) or its helpers")


def test_every_catalogued_script_exists() -> None:
    assert {*REAL_CLIENTS, *CLIENT_HELPERS} - _scripts_on_disk() == set()
    assert all(c.path.is_file() for c in REAL_CLIENTS.values())


def _python_imports(path: Path) -> set[str]:
    """Every module ``path`` imports, and each dotted prefix of it (``from google import
    genai`` imports google and google.genai)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return {".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 2)}


@pytest.mark.parametrize("script", [s for s, c in REAL_CLIENTS.items() if c.runtime == "python"])
def test_a_python_client_imports_the_module_it_is_catalogued_with(script: str) -> None:
    client = REAL_CLIENTS[script]
    imported = _python_imports(client.path)
    sdks = {m for m in CLIENT_PACKAGES if m in imported}
    assert sdks == ({client.module} if client.module else set())


@pytest.mark.parametrize("script", [s for s, c in REAL_CLIENTS.items() if c.runtime == "node"])
def test_a_node_client_imports_the_npm_package_it_is_catalogued_with(script: str) -> None:
    client = REAL_CLIENTS[script]
    imported = set(re.findall(r"""\bfrom\s+['"]([^'"]+)['"]""", client.path.read_text("utf-8")))
    manifest = json.loads((client.path.parent / "package.json").read_text("utf-8"))
    assert client.package in imported & set(manifest["dependencies"])


def test_turn_stands_for_the_turn_formats() -> None:
    assert REAL_CLIENTS["reference.py"].formats == TURN_FORMATS


def test_a_client_whose_module_or_npm_package_is_missing_says_what_to_install() -> None:
    python = RealClient("p", "p.py", "`p`", TURN_FORMATS, "no_module_for_the_test.sub", "p-dist")
    node = RealClient("n", "vercel/n.mjs", "`n`", TURN_FORMATS, None, "no-npm-package-for-the-test")
    assert python.missing() == "no_module_for_the_test.sub is not installed (pip install p-dist)"
    assert "no-npm-package-for-the-test is not installed (npm ci in clients/vercel)" in (
        node.missing() or "")
    assert python.version() is None and node.version() is None


@pytest.mark.parametrize("module", sorted(CLIENT_PACKAGES))
def test_the_install_hint_names_each_catalogued_modules_package(module: str) -> None:
    hint = install_hint(f"ModuleNotFoundError: No module named '{module}.sub'")
    assert f"python -m pip install {CLIENT_PACKAGES[module]} " in hint
    assert '".[clients]"' in hint


GOOD = '[[client]]\nname = "x"\nscript = "x.py"\nhow = "`x`"\nformats = "turn"\n'


@pytest.mark.parametrize(("text", "reason"), [
    (GOOD.replace('name = "x"\n', ""), "client 1: no name"),
    (GOOD + 'colour = "red"\n', "client 1: unknown key colour"),
    (GOOD.replace('"turn"', '["openai-chat", "no-such-format"]'), "client 1: formats"),
    (GOOD.replace('"turn"', '"openai-chat"'), "client 1: formats"),
    (GOOD.replace('"turn"', "[]"), "client 1: formats"),
    (GOOD.replace("x.py", "x.sh"), "client 1: script 'x.sh' is not a .py or .mjs"),
    (GOOD.replace("x.py", "../x.py"), "client 1: script '../x.py' is not a .py or .mjs"),
    (GOOD + 'module = "x"\n', "client 1: a Python client names both its module and its package"),
    (GOOD.replace("x.py", "x.mjs"), "client 1: a .mjs client names its npm package"),
    (GOOD + GOOD.replace('"x"', '"y"'), "client 2: script x.py is listed twice"),
    (GOOD + GOOD.replace("x.py", "y.py"), "client 2: name 'x' is listed twice"),
    ('helpers = ["x.py"]\n' + GOOD, "client 1: script x.py is listed twice"),
    ('helper = ["x.py"]\n' + GOOD, "unknown key helper"),
])
def test_a_malformed_catalogue_is_refused_naming_the_file_the_entry_and_why(
        tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "clients.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: {reason}")):
        read_clients(path)


def test_a_well_formed_catalogue_reads(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    path.write_text('helpers = ["h.py"]\n' + GOOD + 'module = "m"\npackage = "p"\n', "utf-8")
    clients, helpers = read_clients(path)
    assert helpers == ("h.py",) and list(clients) == ["x.py"]
    assert (clients["x.py"].formats, clients["x.py"].module) == (TURN_FORMATS, "m")
