"""The static site writes what would act in a table cell as its escape (issue #34: captured
bidi overrides and C0 controls went raw into the cells of notebooks 01, 02, 06 and 08, so a
cell rendered reversed), as the kit's inert display does."""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from streamcalls_lab.display import hidden
from streamcalls_lab.static_site import export, static_outputs

HOSTILE = ["call\u202eevil", "a\x1b[31mred", "bell\x07", "isolate\u2066x\u2069", "p\\u202eq"]


def _page(html: str) -> str:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("t")
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/html": html,
                                                                   "text/plain": "t"},
                                           execution_count=1)]
    nb.cells = [cell]
    return export(static_outputs(nb), "t")


@pytest.mark.parametrize("render", [
    lambda df: df.to_html(),
    lambda df: df.style.to_html(),
    lambda df: df.set_index("value").to_html(),  # in header cells too
], ids=["dataframe", "styler", "index"])
def test_every_table_cell_writes_what_would_act_as_its_escape(render: object) -> None:
    df = pd.DataFrame({"value": HOSTILE, "n": range(len(HOSTILE))})
    page = _page(render(df))  # type: ignore[operator]
    cells = [c for c in page.split("<t")[1:]]
    assert not [ch for c in cells for ch in c.split(">", 1)[-1] if hidden(ch) and ch not in
                "\n\t\r"]
    assert "call\\u202eevil" in page and "a\\x1b[31mred" in page
    assert "p\\\\u202eq" in page  # a captured backslash cannot forge an escape


def test_an_svg_figure_is_described_by_its_own_title_made_inert() -> None:
    from streamcalls_lab.static_site import svg_title

    drawn = '<svg><title id="t">Calls of &quot;<b>x</b>&quot;\u202e</title><desc>d</desc></svg>'
    assert svg_title(drawn) == 'Calls of "x"\\u202e'
    assert svg_title("<svg/>") == "a drawing without a title"


def test_each_notebook_s_kernel_is_stopped_when_its_run_ends_leaving_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel handed to nbclient is left running by it: the build kept every notebook's
    kernel alive until it exited, and then they died without their exit handlers (a
    notebook's scratch folder stayed in /tmp, and each kernel's connection file too)."""
    from streamcalls_lab.static_site import execute

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the kernel's and this process's temporary folder
    source = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os, tempfile\nscratch = tempfile.TemporaryDirectory()\nprint(os.getpid())")]),
        source)
    nb = execute(source, tmp_path)
    pid = int(nb.cells[0].outputs[0]["text"])
    for _ in range(100):  # asked to stop, it is gone within moments
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the kernel {pid} still runs")
    assert sorted(p.name for p in tmp.iterdir()) == []


def test_the_cell_the_build_runs_first_in_each_kernel_imports_no_notebook_machinery(
    tmp_path: Path,
) -> None:
    """Each kernel of a build first runs the cell that labels figures: it once imported
    this module, and with it nbformat and jsonschema's format checkers (about 2.7 s of CPU
    in each of the course's nine kernels, more than most notebooks themselves)."""
    from streamcalls_lab.static_site import execute

    source = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys\nprint(sorted({m.split('.')[0] for m in sys.modules}"
        " & {'nbformat', 'jsonschema', 'nbconvert', 'jinja2'}))")]), source)
    nb = execute(source, tmp_path)
    assert nb.cells[0].outputs[0]["text"].strip() == "[]"
