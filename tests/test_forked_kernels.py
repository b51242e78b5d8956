"""The suite's forked notebook kernels (tests/support/forked_kernels.py) behave as fresh ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.provisioning.factory import KernelProvisionerFactory

from .conftest import REPO
from .support import forked_kernels

pytestmark = pytest.mark.skipif(bool(os.environ.get(forked_kernels.OFF)),
                                reason=f"{forked_kernels.OFF} is set")

PROBE = r"""
import json, os, signal, sys, tempfile
ahead = "pandas" in sys.modules
import matplotlib.pyplot as plt
print(json.dumps({
    "ahead": ahead,
    "cwd": os.getcwd(),
    "path": sys.path,
    "argv0": os.path.basename(sys.argv[0]),
    "name": __name__,
    "env": {k: v for k, v in os.environ.items() if k != "JPY_PARENT_PID"},
    "tmp": tempfile.gettempdir(),
    "backend": plt.get_backend(),
    "signals": {s: str(signal.getsignal(getattr(signal, s)))
                for s in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGCHLD", "SIGHUP", "SIGXFSZ")},
    "own_session": os.getsid(0) == os.getpid(),
    "stdin": os.read(0, 1).decode(),
    "parent_watched": int(os.environ["JPY_PARENT_PID"]) == os.getppid(),
}))
plt.plot([1, 2]); plt.show()
"""


def _probe(folder: Path) -> tuple[dict, list[str]]:
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PROBE)]
    NotebookClient(nb, kernel_name="python3", timeout=60,
                   resources={"metadata": {"path": str(folder)}}).execute()
    outputs = nb.cells[0].outputs
    facts = json.loads(next(o.text for o in outputs if o.output_type == "stream"))
    return facts, sorted(k for o in outputs for k in o.get("data", {}))


def test_a_notebook_sees_in_a_forked_kernel_what_it_sees_in_a_fresh_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("SCL_PROBE", "set for this run only")
    monkeypatch.delenv("MPLBACKEND", raising=False)
    forked, forked_outputs = _probe(tmp_path)
    factory = KernelProvisionerFactory.instance()
    monkeypatch.setattr(factory, "default_provisioner_name", "local-provisioner")
    fresh, fresh_outputs = _probe(tmp_path)
    assert (forked.pop("ahead"), fresh.pop("ahead")) == (True, False)  # forked, and not
    assert forked == fresh
    assert fresh["env"]["SCL_PROBE"] == "set for this run only"
    assert fresh["tmp"] == str(tmp_path) and fresh["cwd"] == str(tmp_path)
    assert fresh["backend"] == "module://matplotlib_inline.backend_inline"
    assert forked_outputs == fresh_outputs == ["image/png", "text/plain"]


def test_an_interrupt_reaches_a_forked_kernel_and_a_shutdown_ends_it(tmp_path: Path) -> None:
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(tmp_path))
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        assert isinstance(km.provisioner.process, forked_kernels.ForkedProcess)
        pid = km.provisioner.process.pid
        client.execute("import time; time.sleep(60)")
        time.sleep(0.5)
        km.interrupt_kernel()
        reply = client.get_shell_msg(timeout=20)
        assert reply["content"]["ename"] == "KeyboardInterrupt"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    assert not km.is_alive()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped by the zygote, not left a zombie


def test_a_kernel_starts_fresh_once_the_zygote_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_client import KernelManager

    gone = forked_kernels.Zygote(dict(os.environ))
    gone._process.kill()
    gone._process.wait()
    monkeypatch.setattr(forked_kernels, "_zygote", gone)
    monkeypatch.setattr(forked_kernels, "_zygote_failed", False)  # both restored after
    km = KernelManager(kernel_name="python3")
    try:
        km.start_kernel(cwd=str(tmp_path))
        assert not isinstance(km.provisioner.process, forked_kernels.ForkedProcess)
        assert forked_kernels.zygote() is None  # and every later kernel of the worker too
    finally:
        km.shutdown_kernel(now=True)
        gone.close()


def test_only_what_the_kit_imports_is_loaded_ahead() -> None:
    """Nothing that looks for a running IPython when imported (its own or another's) is in
    the zygote before a kernel starts."""
    code = (f"import sys; import {', '.join(forked_kernels.PRELOAD)}; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True, cwd=REPO).stdout.replace("'", '"'))
    assert {"IPython", "ipykernel", "ipywidgets", "matplotlib", "matplotlib_inline",
            "zmq", "tornado"} & set(loaded) == set()


def test_a_kernel_of_another_interpreter_is_started_as_jupyter_client_starts_it() -> None:
    env = {"PATH": os.defpath}
    assert forked_kernels.forkable([sys.executable, "-m", "ipykernel_launcher", "-f", "x"], env)
    assert not forked_kernels.forkable(["/usr/bin/python3", "-m", "ipykernel_launcher",
                                        "-f", "x"], env)
    assert not forked_kernels.forkable([sys.executable, "-m", "other_kernel", "-f", "x"], env)
