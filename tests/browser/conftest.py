"""Real-browser fixtures: a local JupyterLab (or Voila) server and Debian's Chromium.

Every test module in this folder gets them (pytest reads this conftest). The server
listens on 127.0.0.1 only, on a free port, with a random token, and keeps its runtime,
config and workspace files in a temporary directory; the browser is ``/usr/bin/chromium``
(installed by ``make browser``), never a downloaded build.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ..conftest import CAPTURES, DATA, REPO

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
ARTIFACTS = REPO / "artifacts" / "browser"
START_TIMEOUT = 90.0
VOILA_START_TIMEOUT = 60.0
RENDER_TIMEOUT_MS = 120_000
UPDATE_TIMEOUT_MS = 15_000
LOCAL_SCHEMES = frozenset({"file", "data", "blob", "about", "chrome-error"})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def course_data() -> Path:
    """The bundled data/ once it holds captures; until then, the real recordings."""
    if any(DATA.glob("*.sse")) or any(DATA.glob("*/*.sse")):
        return DATA
    if CAPTURES.is_dir():
        return CAPTURES
    pytest.skip("neither data/ nor the real captures hold any .sse file")


# JupyterLab, driven through the app object that --LabApp.expose_app_in_browser exposes;
# the notebook is found by its path, whatever else the workspace has open.
_FIND = """(path) => {
  for (const w of window.jupyterapp ? window.jupyterapp.shell.widgets('main') : []) {
    if (w.context && w.context.path === path && w.content) return w;
  }
  return null;
}"""
_KERNEL_IDLE = """(path) => {
  const w = (FIND)(path);
  const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(k && k.status === 'idle' && w.content.widgets.length);
}""".replace("FIND", _FIND)
# The command is given the notebook's panel (widgetId, as a cell toolbar's button does), so it
# runs that notebook whichever one has the focus; given a panel, the command also brings it
# to the front (unless told activate: false), as a click would.
_RUN_ALL = """(path) => {
  const w = (FIND)(path);
  window.jupyterapp.commands.execute('notebook:run-all-cells',
                                     {widgetId: w.id});  // not awaited: see _ALL_RAN
  return true;
}""".replace("FIND", _FIND)
_PANEL = """(path) => { const w = (FIND)(path); return w ? w.id : null; }""".replace("FIND", _FIND)
_SHOW = """(path) => {
  window.jupyterapp.shell.activateById((FIND)(path).id);
  return true;
}""".replace("FIND", _FIND)
_ALL_RAN = """(path) => {
  const w = (FIND)(path);
  const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k) return false;
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  const failed = w.node.querySelector("[data-mime-type='application/vnd.jupyter.error']");
  return k.status === 'idle' && (!!failed || code.every(c => c.model.executionCount !== null));
}""".replace("FIND", _FIND)


@dataclass
class Server:
    """A running local server: its base URL, token, root folder and process."""

    base: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def copy_notebook(self, name: str) -> str:
        """Copy a course notebook into the served folder; tests never run one in place
        (the browser would save its outputs into the repository's clean notebook)."""
        shutil.copyfile(REPO / "notebooks" / name, self.root / name)
        return name

    def run_all_cells(self, page: Any, name: str, timeout_s: float = 120) -> None:
        """Open ``name`` in JupyterLab, run every cell, wait until the last one finished."""
        self.start_all_cells(page, name, timeout_s)
        self.wait_all_ran(page, name, timeout_s)

    def start_all_cells(self, page: Any, name: str, timeout_s: float = 120) -> None:
        """Open ``name`` in JupyterLab and start Run All, without waiting for it to finish
        (so several tabs can run at once)."""
        self.open_notebook(page, name)
        self.start_run_all(page, name, timeout_s)

    def open_notebook(self, page: Any, name: str) -> None:
        """Load JupyterLab on ``name`` in ``page``; its kernel may still be starting."""
        page.goto(self.url(f"lab/tree/{name}?reset"))  # reset: no tabs left from earlier tests

    @staticmethod
    def open_another(page: Any, name: str) -> None:
        """Open ``name`` beside what the JupyterLab in ``page`` already has open (File >
        Open, not a new page: one application, however many notebooks)."""
        page.wait_for_function("() => !!window.jupyterapp")
        # After the workspace is restored: ?reset would close anything opened before.
        page.evaluate("""async (p) => {
          await window.jupyterapp.restored;
          await window.jupyterapp.commands.execute('docmanager:open', {path: p});
          return true;
        }""", name)

    @staticmethod
    def panel_id(page: Any, name: str, timeout_s: float = 120) -> str:
        """The DOM id of the panel ``name`` is open in, once it is there."""
        handle = page.wait_for_function(_PANEL, arg=name, timeout=timeout_s * 1000)
        return str(handle.json_value())

    @staticmethod
    def show(page: Any, name: str) -> None:
        """Bring the panel of ``name`` to the front, as clicking its tab does."""
        page.evaluate(_SHOW, name)

    @staticmethod
    def start_run_all(page: Any, name: str, timeout_s: float = 120) -> None:
        """Once the kernel of ``name`` (open in ``page``) is idle, start Run All."""
        page.wait_for_function(_KERNEL_IDLE, arg=name, timeout=timeout_s * 1000)
        page.evaluate(_RUN_ALL, name)

    @staticmethod
    def wait_all_ran(page: Any, name: str, timeout_s: float = 120) -> None:
        """Wait until every code cell of ``name`` ran (or one failed) and its kernel is idle."""
        page.wait_for_function(_ALL_RAN, arg=name, timeout=timeout_s * 1000, polling=500)

    @staticmethod
    def error_outputs(page: Any) -> list[str]:
        """Text of every error output (a traceback) on the page."""
        sel = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"
        return [el.text_content() or "" for el in page.query_selector_all(sel)]


def _wait_ready(server: Server, probe: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(server.url(probe), timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    tail = server.log.read_text()[-3000:]
    raise RuntimeError(f"server not ready after {START_TIMEOUT}s:\n{tail}")


def start_server(
    argv: Sequence[str], root: Path, home: Path, env: dict[str, str] | None = None,
    probe: str = "api/status",
) -> Server:
    """Start ``python -m <argv>`` bound to 127.0.0.1 with a token and private Jupyter dirs.

    ``argv`` is the module and its own options (``["jupyterlab"]``, ``["voila", nb]``); the
    port, token and directories are added here.
    """
    port, token = free_port(), secrets.token_hex(16)
    dirs = {name: home / name for name in ("runtime", "config", "workspaces", "settings")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    full_env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTER_PLATFORM_DIRS": "1",
        **(env or {}),
    }
    root_flag = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    command = [
        sys.executable, "-m", *argv, "--no-browser", "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", *root_flag,
    ]
    log = home / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=root, env=full_env, stdout=out,
                                   stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", token, root, process, log)
    try:
        _wait_ready(server, probe)
    except BaseException:
        stop_server(server)
        raise
    return server


def stop_server(server: Server) -> None:
    """Stop the server this fixture started (by its own process, never by name)."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=5)


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """JupyterLab serving an empty temporary folder (``.root``), for the whole session."""
    lab_root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    # Render every cell (no windowing): off-screen outputs then have text and layout.
    tracker = home / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    # No "get Jupyter news?" toast over the screenshots, and no attempt to fetch any.
    apputils = home / "settings" / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True)
    (apputils / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}')
    # The kernel inherits this environment: inline figures even when pytest runs with Agg.
    env = {"STREAMCALLS_DATA": str(course_data()),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    server = start_server(["jupyterlab", "--LabApp.expose_app_in_browser=True"],
                          lab_root, home, env)
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium per test module: playwright's sync API keeps an event loop running in
    this thread while it is open, which every later test of the worker would see (the
    breaker's view waits on a running loop to debounce)."""
    if not CHROMIUM.exists():
        # `make test` installs it, so in CI a missing browser is a failure, not a skip.
        missing = pytest.fail if os.environ.get("CI") else pytest.skip
        missing("Debian's Chromium is missing: run `make browser`")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page (own context, so no state leaks between tests), 1400x1000."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    context.close()


def leaves_machine(url: str) -> bool:
    """True for a URL that would reach another machine (anything but loopback or local)."""
    parts = urlsplit(url)
    return parts.scheme not in LOCAL_SCHEMES and (parts.hostname or "") not in LOOPBACK


def block_remote(context: Any) -> list[str]:
    """Abort every request of ``context`` that would leave the machine; return them, in order.

    WebSockets are not routed, so their URLs are checked as they open.
    """
    left: list[str] = []

    def route(r: Any) -> None:
        if leaves_machine(r.request.url):
            left.append(r.request.url)
            r.abort("blockedbyclient")
        else:
            r.continue_()

    context.route("**/*", route)
    context.on("page", lambda pg: pg.on(
        "websocket", lambda ws: left.append(ws.url) if leaves_machine(ws.url) else None))
    return left


@pytest.fixture
def left_machine(page: Any) -> list[str]:
    """Every request the page tried to send off this machine (each one aborted, not sent)."""
    left = block_remote(page.context)
    page.on("websocket", lambda ws: left.append(ws.url) if leaves_machine(ws.url) else None)
    return left


@pytest.fixture
def dialogs(page: Any) -> list[str]:
    """Every JavaScript alert/confirm/prompt the page opened (each dismissed)."""
    seen: list[str] = []

    def dismiss(dialog: Any) -> None:
        seen.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", dismiss)
    return seen


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def wait_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Wait until Voila listens on ``port`` (its log quoted if it exits or never does)."""
    deadline = time.monotonic() + VOILA_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"voila exited early:\n{log.read_text()[-3000:]}")
        with socket.socket() as s:
            s.settimeout(1)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise RuntimeError(f"voila not listening after {VOILA_START_TIMEOUT}s:\n"
                       f"{log.read_text()[-3000:]}")


@contextlib.contextmanager
def voila_server(tmp_path: Path, notebook: Path, paths: dict[str, Path],
                 *options: str) -> Iterator[Server]:
    """Voila serving ``notebook`` as ``make demo`` does, on a free localhost port, with
    Jupyter's own folders under ``tmp_path``; ``paths`` put first on ``JUPYTER_PATH`` and the
    like (the offline template, the culling config); stopped by its own pid after."""
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "MPLBACKEND": "Agg"}
    for name in ("runtime", "config", "data"):
        (tmp_path / name).mkdir()
        env[f"JUPYTER_{name.upper()}_DIR"] = str(tmp_path / name)
    for var, path in paths.items():
        env[var] = os.pathsep.join(p for p in (str(path), os.environ.get(var)) if p)
    command = [sys.executable, "-m", "voila", str(notebook), "--no-browser",
               "--template=streamcalls", f"--port={port}", "--Voila.ip=127.0.0.1",
               "--Voila.port_retries=0", f"--token={token}", *options]
    log = tmp_path / "voila.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=notebook.parent, env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", token, notebook.parent, process, log)
    try:
        wait_listening(process, port, log)
        yield server
    finally:
        stop_server(server)
