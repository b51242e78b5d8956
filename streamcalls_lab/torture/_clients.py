"""The real clients under ``clients/``: one catalogue that every consumer reads.

``clients.toml`` beside this module declares each client once: its row name in
docs/clients.md, its script under ``clients/``, how it is driven, the formats it reads, and
the module it imports with the package that installs it. ``make clients``
(scripts/torture_clients.py) builds docs/clients.md's table from it, the tests of the real
clients (tests/torture/) and benchmarks/bench_torture.py pick their clients from it by script,
and :func:`install_hint` names the package of a missing client module from it. What a consumer
finds in a client (a test's expected classes, the doc's findings) stays in that consumer,
keyed by script; a test holds every script under ``clients/`` to being here or a helper.

Data, not code: a table of twenty entries of one shape, which Python writes as a run of
repeated constructor calls. In the package rather than in ``clients/``: the library reads it
(``install_hint``), and ``clients/`` is not in a wheel (:data:`CLIENTS_DIR` is a checkout's).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..check import TURN_FORMATS
from ._cases import SERVED_FORMATS

CATALOG_FILE = Path(__file__).with_name("clients.toml")
CLIENTS_DIR = Path(__file__).resolve().parents[2] / "clients"
"""The repository's ``clients/`` (absent from an installed wheel)."""
_RUNTIMES = {".py": "python", ".mjs": "node"}
_REQUIRED = ("name", "script", "how", "formats")
_KEYS = frozenset((*_REQUIRED, "module", "package"))


@dataclass(frozen=True)
class RealClient:
    """One real client under ``clients/``, as ``clients.toml`` declares it."""

    name: str
    script: str  # its path under clients/, with forward slashes
    how: str  # Markdown
    formats: tuple[str, ...]
    module: str | None = None  # the Python module it imports; None: stdlib and the kit
    package: str | None = None  # what installs it: PyPI for .py, npm (node_modules) for .mjs

    @property
    def runtime(self) -> str:
        """``python`` or ``node``, from the script's suffix."""
        return _RUNTIMES[PurePosixPath(self.script).suffix]

    @property
    def path(self) -> Path:
        return CLIENTS_DIR / self.script

    def command(self, python: str = sys.executable) -> list[str]:
        """The command that runs it (``python`` for a Python client)."""
        return [python if self.runtime == "python" else "node", str(self.path)]

    def missing(self) -> str | None:
        """Why it cannot run here (what is not installed), or None when it can."""
        if self.runtime == "node":
            if shutil.which("node") is None or not self._npm_manifest().is_file():
                where = PurePosixPath(self.script).parent
                return (f"node or the npm package {self.package} is not installed (npm ci in "
                        f"clients/{where})")
            return None
        if self.module is None:
            return None
        try:
            found = importlib.util.find_spec(self.module)
        except ModuleNotFoundError:  # a dotted module whose parent is missing
            found = None
        if found is None:
            return f"{self.module} is not installed (pip install {self.package})"
        return None

    def version(self) -> str | None:
        """The installed version of what it needs, for the table; None when it is missing."""
        if self.missing() is not None:
            return None
        if self.runtime == "node":
            node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
            installed = json.loads(self._npm_manifest().read_text("utf-8"))["version"]
            return f"{self.package} {installed}, Node {node.strip()}"
        if self.package is None:
            return f"Python {sys.version.split()[0]}"
        return f"{self.package} {importlib.metadata.version(self.package)}"

    def _npm_manifest(self) -> Path:
        return self.path.parent / "node_modules" / str(self.package) / "package.json"


def _client(entry: Any, where: str) -> RealClient:
    """One ``[[client]]`` table as a :class:`RealClient`, or a ValueError naming ``where``."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: not a table")
    if unknown := sorted(set(entry) - _KEYS):
        raise ValueError(f"{where}: unknown key {', '.join(unknown)} (known: "
                         f"{', '.join(sorted(_KEYS))})")
    if absent := [k for k in _REQUIRED if k not in entry]:
        raise ValueError(f"{where}: no {', '.join(absent)}")
    text = {k: entry.get(k) for k in ("name", "script", "how", "module", "package")}
    if bad := [k for k, v in text.items() if v is not None and not (isinstance(v, str) and v)]:
        raise ValueError(f"{where}: {', '.join(bad)} must be a non-empty string")
    script = PurePosixPath(entry["script"])
    if script.is_absolute() or ".." in script.parts or script.suffix not in _RUNTIMES:
        raise ValueError(f"{where}: script {entry['script']!r} is not a .py or .mjs path "
                         "inside clients/")
    formats = entry["formats"]
    if formats == "turn":
        formats = TURN_FORMATS
    if (isinstance(formats, str) or not isinstance(formats, list | tuple) or not formats
            or not all(f in SERVED_FORMATS for f in formats)):
        raise ValueError(f"{where}: formats {entry['formats']!r} is not \"turn\" or a list of "
                         f"served formats ({', '.join(SERVED_FORMATS)})")
    node = _RUNTIMES[script.suffix] == "node"
    if node and (entry.get("module") is not None or entry.get("package") is None):
        raise ValueError(f"{where}: a .mjs client names its npm package and no Python module")
    if not node and (entry.get("module") is None) != (entry.get("package") is None):
        raise ValueError(f"{where}: a Python client names both its module and its package, "
                         "or neither")
    return RealClient(entry["name"], script.as_posix(), entry["how"], tuple(formats),
                      entry.get("module"), entry.get("package"))


def read_clients(path: Path = CATALOG_FILE) -> tuple[dict[str, RealClient], tuple[str, ...]]:
    """The catalogue at ``path``: its clients by script, in order, and its helper scripts.
    A malformed entry is a ValueError naming the file, the entry and the reason."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    if unknown := sorted(set(data) - {"client", "helpers"}):
        raise ValueError(f"{path}: unknown key {', '.join(unknown)} (known: client, helpers)")
    helpers = data.get("helpers", [])
    if not isinstance(helpers, list) or not all(isinstance(h, str) for h in helpers):
        raise ValueError(f"{path}: helpers must be a list of script paths")
    clients: dict[str, RealClient] = {}
    for i, entry in enumerate(data.get("client", []), 1):
        client = _client(entry, f"{path}: client {i}")
        if client.script in clients or client.script in helpers:
            raise ValueError(f"{path}: client {i}: script {client.script} is listed twice")
        if client.name in {c.name for c in clients.values()}:
            raise ValueError(f"{path}: client {i}: name {client.name!r} is listed twice")
        clients[client.script] = client
    return clients, tuple(helpers)


REAL_CLIENTS, CLIENT_HELPERS = read_clients()
CLIENT_PACKAGES = {c.module: c.package for c in REAL_CLIENTS.values() if c.module}
"""The Python modules the clients import, and the package that installs each."""
