"""Every notebook runs, lenient, on folders it has never seen: real recordings and odd files.

nbmake runs the course on the bundled data; here each notebook is executed headless with
``STREAMCALLS_DATA`` pointing at the real captures (skipped when absent) and at a folder of
recordings the kit cannot fully read, and must finish with no error output. Cells tagged
``data-independent`` (notebook 5's runs of the handler suite, the same on any folder and run
by nbmake) are left out here to keep the file fast.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from .conftest import CAPTURES, REPO
from .support import turns

SKIP = "data-independent"
NOTEBOOKS = sorted((REPO / "notebooks").glob("0[1-689]-*.ipynb"))


def odd_folder(root: Path) -> Path:
    """One recording of each kind a reader may bring that the kit cannot fully read."""
    folder = root / "odd"
    (folder / "anthropic-messages").mkdir(parents=True)
    whole = turns.anthropic(["Checking"], [("lookup", ['{"id": ', '"A-4', '471"}'])])
    (folder / "anthropic-messages" / "cut-off.sse").write_bytes(whole[: len(whole) * 2 // 3])
    (folder / "unknown-format.sse").write_bytes(b'event: ping\ndata: {"hello": "world"}\n\n')
    (folder / "binary.sse").write_bytes(bytes(range(256)) * 4)
    (folder / "empty.sse").write_bytes(b"")
    (folder / "html-error.sse").write_bytes(b"<html><body>502 Bad Gateway</body></html>")
    (folder / "chunks.jsonl").write_text('{"type": "text-delta"}\n')
    return folder


def run(notebook: Path, data: Path | str, monkeypatch: pytest.MonkeyPatch,
        tmp: Path) -> list[str]:
    """Execute ``notebook`` on ``data`` with ``tmp`` as its temporary folder; the error
    outputs it produced, and a line for anything it left in ``tmp`` (a reader's /tmp would
    fill up with every run)."""
    from nbclient import NotebookClient

    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("STREAMCALLS_DATA", str(data))
    monkeypatch.setenv("STREAMCALLS_CAPTURES", str(data))  # notebook 5 then surveys one folder
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("STREAMCALLS_CAPTURE", raising=False)
    monkeypatch.delenv("STREAMCALLS_SOURCE", raising=False)
    nb = nbformat.read(notebook, as_version=4)
    nb.cells = [c for c in nb.cells if SKIP not in c.metadata.get("tags", [])]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(notebook.parent)}}).execute()
    return [f"cell {i}: {o.get('ename')}: {o.get('evalue')}"
            for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.outputs if o.output_type == "error"] + [
        f"left behind: {p.name}" for p in sorted(tmp.iterdir())]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_each_notebook_runs_on_the_real_captures(
    notebook: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not CAPTURES.is_dir():
        pytest.skip(f"real captures not found at {CAPTURES}")
    assert run(notebook, CAPTURES, monkeypatch, tmp_path / "tmp") == []


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_each_notebook_runs_on_a_folder_of_odd_recordings(
    notebook: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(notebook, odd_folder(tmp_path), monkeypatch, tmp_path / "tmp") == []


def _reads_data_folder(notebook: Path) -> bool:
    return any("corpus.data_folder()" in c.source
               for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code")


def test_every_notebook_reads_its_folder_through_data_folder() -> None:
    """`STREAMCALLS_DATA=` (set, empty) is the default folder: each notebook asks
    `corpus.data_folder()`, whose reading of an empty variable `tests/test_corpus.py` holds
    (running all eight again on the bundled data would repeat what nbmake does)."""
    assert [p.name for p in NOTEBOOKS if not _reads_data_folder(p)] == []
