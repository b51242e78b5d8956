"""Where the kit starts a kernel itself (``make site``): no unencrypted TCP port, so no
warning about one on the terminal, and no socket file left behind."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from streamcalls_lab.static_site import execute


def test_the_site_runs_a_notebook_without_the_kernels_tcp_warning(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    notebook = tmp_path / "tiny.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os; print(os.environ['STREAMCALLS_DATA'])")]), notebook)
    nb = execute(notebook, tmp_path / "data", timeout=120)
    assert nb.cells[0].outputs[0]["text"].strip() == str(tmp_path / "data")
    err = capfd.readouterr().err
    assert "without encryption" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.ipynb"]  # no kernel-ipc-*


def test_the_git_filter_drops_the_kernel_display_name_a_save_changes(tmp_path: Path) -> None:
    """``make git-filter``'s keys, applied by nbstripout as git would: a notebook saved under
    another kernel display name comes out as committed."""
    import json
    import shutil
    import subprocess

    if not shutil.which("make"):
        pytest.skip("needs make")
    repo = Path(__file__).resolve().parents[1]
    keys = subprocess.run(["make", "-s", "--no-print-directory", "-f", str(repo / "Makefile"),
                           "-p", "-n", "VENV=/nonexistent", "git-filter"], cwd=repo,
                          capture_output=True, text=True).stdout
    line = next(x for x in keys.splitlines() if x.startswith("LAB_SAVE_KEYS :="))
    # the := line as make holds it, its $(foreach ...) unexpanded: expand it here
    assert "metadata.kernelspec.display_name" in line
    committed = repo / "notebooks" / "01-anatomy-of-a-streamed-turn.ipynb"
    saved = json.loads(committed.read_text(encoding="utf-8"))
    saved["metadata"]["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    target = tmp_path / "saved.ipynb"
    target.write_text(json.dumps(saved), encoding="utf-8")
    nbstripout = shutil.which("nbstripout", path=str(Path(__import__("sys").executable).parent))
    if nbstripout is None:
        pytest.skip("needs nbstripout")
    out = subprocess.run([nbstripout, "--keep-id", "-t", "--extra-keys",
                          "metadata.kernelspec.display_name", str(target)],
                         capture_output=True, text=True, check=True).stdout
    assert "display_name" not in json.loads(out)["metadata"]["kernelspec"]
