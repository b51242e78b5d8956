"""environment.yml mirrors pyproject.toml, so conda users get what pip users get."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from .conftest import REPO

# PyPI names whose conda-forge package is spelled differently.
CONDA_NAMES = {"dask[dataframe]": "dask"}


def _split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*(.*)", requirement).groups()
    return CONDA_NAMES.get(name.lower(), name.lower()), spec.replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return dict(map(_split, reqs))


def environment_requirements() -> dict[str, str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    reqs: list[str] = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            reqs += [r for r in dep["pip"] if not r.startswith("-e")]
        elif dep not in ("pip",) and not dep.startswith("python"):
            reqs.append(dep)
    return dict(map(_split, reqs))


def test_environment_yml_mirrors_pyproject() -> None:
    assert environment_requirements() == pyproject_requirements()


def test_python_versions_agree() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    assert f"python{project['requires-python']}" in env["dependencies"]


def test_environment_installs_the_kit_itself() -> None:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip


def test_the_make_test_environment_builds_no_iri_grammar_on_import() -> None:
    """etc/overrides.txt leaves rfc3987-syntax out of the resolve: it built its parsers in
    every process that imported nbformat (1.9 s of CPU each: every pytest worker, JupyterLab,
    Voila, nbconvert), for formats no Jupyter schema uses. Checked where it applies, in the
    environment the Makefile builds."""
    if Path(sys.prefix).resolve() != (REPO / ".venv").resolve():
        pytest.skip("not the environment `make test` builds")
    code = "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
