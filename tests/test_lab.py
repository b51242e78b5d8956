"""`make lab` installs what the course runs and starts JupyterLab quietly: no news feed or
update check reaching the network, no deprecated-token warning, the port a variable, and a
package build with no licence warning."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from .conftest import REPO

CONFIG = REPO / "etc" / "jupyter"
MAKEFILE = (REPO / "Makefile").read_text()


def recipe(target: str) -> str:
    """The lines of ``target``'s rule in the Makefile, continuation lines joined."""
    body = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", MAKEFILE, re.M)
    assert body, target
    return body.group(1).replace("\\\n", " ")


def test_the_lab_install_has_the_clients_notebook_7_runs() -> None:
    assert '-e ".[demo,clients]"' in recipe("$(VENV)/.lab")


def test_the_lab_port_is_a_make_variable() -> None:
    assert re.search(r"^LAB_PORT\s*\?=\s*\d+", MAKEFILE, re.M)
    assert "--port=$(LAB_PORT)" in recipe("lab")


def test_the_lab_reads_the_courses_own_jupyter_config() -> None:
    assert "JUPYTER_CONFIG_PATH=$(CURDIR)/etc/jupyter" in recipe("lab")


def test_the_course_config_turns_off_news_update_checks_and_the_shim() -> None:
    server = json.loads((CONFIG / "jupyter_server_config.json").read_text())
    assert server["LabApp"]["news_url"] is None
    assert server["LabApp"]["check_for_updates_class"] == "jupyterlab.NeverCheckForUpdate"
    assert server["ServerApp"]["jpserver_extensions"] == {"notebook_shim": False}
    page = json.loads((CONFIG / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"]["@jupyterlab/apputils-extension:announcements"] is True


def test_the_licence_is_an_spdx_string_with_its_file() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in project["build-system"]["requires"][0]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_jupyterlab_on_the_course_config_starts_quietly(tmp_path: Path) -> None:
    """Started as `make lab` starts it: the page says news is off and the announcements plugin
    disabled, the update endpoint has nothing, and the log has no warning at all."""
    lab = Path(sys.executable).with_name("jupyter-lab")
    if not lab.exists() and not shutil.which("jupyter-lab"):
        pytest.skip("jupyterlab is not installed")
    port = _port()
    env = {**os.environ, "HOME": str(tmp_path), "JUPYTER_CONFIG_PATH": str(CONFIG),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
         "--IdentityProvider.token=lab-test", f"--notebook-dir={REPO / 'notebooks'}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        page = None
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"{base}/lab?token=lab-test", timeout=2) as r:
                    page = r.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert page is not None, "JupyterLab did not answer"
        config = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page,
                                      re.S).group(1))
        assert config["news"] == {"disabled": True}
        assert "@jupyterlab/apputils-extension:announcements" in config["disabledExtensions"]
        with urllib.request.urlopen(f"{base}/lab/api/update?token=lab-test", timeout=5) as r:
            assert json.loads(r.read()) == {"notification": None}
    finally:
        proc.terminate()
        log, _ = proc.communicate(timeout=30)
    warnings = [line for line in log.splitlines()
                if re.search(r"\[W |Warning|deprecated", line, re.I)]
    assert warnings == [], warnings
