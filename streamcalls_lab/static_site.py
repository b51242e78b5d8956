"""The static edition of the course: every notebook executed, exported as offline HTML.

``build_site(out)`` runs each notebook on a data folder (as ``STREAMCALLS_DATA`` does for a
reader), exports it with nbconvert's lab template and writes an index page linking them, in
the course's order with what each teaches, builds on and takes (``notebooks/README.md``'s
table, read by :mod:`.course.syllabus`: the path is written once).
The pages need no kernel and no network: plots are inline PNGs, every kit widget shows the
static, escaped HTML rendering it carries beside its live view, and nothing loads from a
CDN (no require.js, MathJax, Mermaid or widget manager). Each page also carries a Content
Security Policy that allows no script at all, so captured text stays inert even if some
output forgot to escape it.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat
from jinja2 import DictLoader

from .corpus import data_folder
from .course.syllabus import README, Step, steps
from .display import inert

REPO_NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# No script, no frame, no fetch; styles and images only from the page itself or data: URIs.
CSP = ("default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
       "font-src 'self' data:; base-uri 'none'; form-action 'none'")
_CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'

# nbconvert's lab page without the blocks that fetch code from a CDN.
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}CSP{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block data_javascript -%}{%- endblock data_javascript -%}
{%- block extra_css -%}<style>STYLE</style>{%- endblock extra_css -%}
{%- block data_png scoped -%}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
{%- set alt = output | get_metadata('alt', 'image/png') %}
 alt="{{ (alt or 'a figure without a title') | escape_html }}">
</div>
{%- endblock data_png -%}
{%- block data_svg scoped -%}
<div class="jp-RenderedSVG jp-OutputArea-output {{ extra_class }}" data-mime-type="image/svg+xml">
<img src="data:image/svg+xml;base64,{{ output.data['image/svg+xml'] | text_base64 | escape_html }}"
 alt="{{ output.data['image/svg+xml'] | svg_title | escape_html }}">
</div>
{%- endblock data_svg -%}
"""
_SVG_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>", re.DOTALL)


def svg_title(svg: str | list[str]) -> str:
    """An SVG's first ``<title>`` as plain, inert text (its alt text on the page)."""
    match = _SVG_TITLE.search("".join(svg))
    text = html.unescape(re.sub(r"<[^>]*>", "", match.group(1))) if match else ""
    return inert(" ".join(text.split())) or "a drawing without a title"
# Readable on a laptop and a projector: 17 px text in a measure of about 80 characters, code
# and outputs a size smaller on a tinted ground. The theme's own sizes are variables set on
# :root; setting them on body wins for everything inside it, whatever order the sheets load in.
STYLE = (
    "body{--jp-content-font-size1:17px;--jp-content-line-height:1.6;--jp-code-font-size:15px;"
    "--jp-ui-font-size1:16px;font-size:17px;line-height:1.6;margin:0 auto;max-width:62rem;"
    "padding:1.5rem 1.25rem}"
    "main{max-width:62rem;margin:0 auto}"
    "pre,code{font-size:15px}"
    ".jp-RenderedHTMLCommon pre,.jp-OutputArea-output pre,.highlight pre{background:#f6f8fa;"
    "border:1px solid #d0d7de;border-radius:6px;padding:.6rem .8rem;overflow-x:auto}"
    ".jp-RenderedHTMLCommon :not(pre)>code{background:#eff1f3;padding:.1em .3em;"
    "border-radius:4px}"
    "img,svg{max-width:100%;height:auto}"
    "a{color:#0b5cad}h1,h2,h3{line-height:1.25}"
    "ol li{margin:.5rem 0}small{font-size:15px;color:#444}"
)
_TEMPLATE = _TEMPLATE.replace("CSP", _CSP_META).replace("STYLE", STYLE)


@dataclass(frozen=True)
class Page:
    """One exported notebook: its HTML file and the title the index links it by."""

    path: Path
    title: str
    errors: int


def title_of(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The notebook's first Markdown heading, else ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#+\s+(.+)$", cell.source, re.MULTILINE)
            if match:
                return match.group(1).strip()
    return fallback


def execute(path: Path, data: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run ``path`` top to bottom in its own folder on ``data``; errors stay in the outputs."""
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(_DESCRIBE_FIGURES))
    env = {**os.environ, "STREAMCALLS_DATA": str(data),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    # The kernel talks over Unix sockets in a private folder, not unencrypted TCP ports on
    # loopback (which ipykernel warns about, once per notebook, on every `make site`); its
    # connection file (which holds the kernel's signing key) goes there too, and with it.
    with tempfile.TemporaryDirectory(prefix="scl-kernel-") as sockets:
        km = KernelManager(kernel_name="python3", transport="ipc",
                           ip=str(Path(sockets) / "kernel"),
                           connection_file=str(Path(sockets) / "kernel.json"))
        client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3",
                                allow_errors=True,
                                resources={"metadata": {"path": str(path.parent)}})
        try:
            client.execute(env=env)
        finally:  # nbclient leaves a kernel it was handed running (the whole build, each)
            if km.has_kernel:
                km.shutdown_kernel()  # asked, so the kernel's exit handlers run
    del nb.cells[0]
    for cell in nb.cells:  # numbered as if the describing cell had not run
        if cell.get("execution_count"):
            cell.execution_count -= 1
        for output in cell.get("outputs", []):
            if output.get("execution_count"):
                output.execution_count -= 1
    return nb


# Run in the kernel before the notebook: each inline figure's display metadata gets its title
# as ``alt`` (read by the template's data_png block), instead of nbconvert's placeholder.
# Imported from `display`, not from here: this module imports nbformat, and with it
# jsonschema's format checkers (about 2.7 s of CPU in every kernel of a build).
_DESCRIBE_FIGURES = "from streamcalls_lab.display import describe_figures\ndescribe_figures()"


def static_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop live-widget views and widget state, so each output falls back to its static HTML;
    every HTML table's cells made inert (:func:`inert_cells`)."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            data.pop(WIDGET_VIEW, None)
            if isinstance(data.get("text/html"), str | list):
                text = data["text/html"]
                data["text/html"] = inert_cells("".join(text) if isinstance(text, list)
                                                else text)
    return nb


_CELL = re.compile(r"(<t[dh]\b[^>]*>)(.*?)(</t[dh]>)", re.IGNORECASE | re.DOTALL)


def inert_cells(page: str) -> str:
    """``page`` with the text of every table cell as :func:`~.display.inert` writes it: a
    bidi override, a C0 control or any other character that would act written as its
    escape (``\\u202e``), a backslash doubled so an escape cannot be forged; markup kept."""
    return _CELL.sub(lambda m: m.group(1) + _inert_text(m.group(2)) + m.group(3), page)


def _inert_text(cell: str) -> str:
    # tags inside a cell (a kit widget's spans) kept; only the text between them escaped
    return re.sub(r"[^<>]+(?=<|$)", lambda m: inert(m.group(), lines=True), cell)


def errors_in(nb: nbformat.NotebookNode) -> int:
    return sum(o.output_type == "error" for c in nb.cells for o in c.get("outputs", []))


def export(nb: nbformat.NotebookNode, title: str) -> str:
    """One notebook as a self-contained, script-free HTML page."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", extra_loaders=[DictLoader({"site": _TEMPLATE})],
                            template_file="site", embed_images=True)
    exporter.register_filter("svg_title", svg_title)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return body


def course_path() -> list[Step]:
    """The course's path from ``notebooks/README.md``; empty where there is no README."""
    return steps(README) if README.is_file() else []


def _item(page: Page, step: Step | None) -> str:
    link = f'<a href="{html.escape(page.path.name)}">{html.escape(page.title)}</a>'
    if step is None:
        return f"<li>{link}</li>"
    return (f"<li>{link}: {html.escape(step.teaches)}. <small>Builds on: "
            f"{html.escape(step.builds_on)}; about {step.minutes} min.</small></li>")


def index_page(pages: Sequence[Page], data: Path, path: Sequence[Step] | None = None) -> str:
    """The index: every page in the course's order, each with its step of ``path`` (what it
    teaches, builds on and takes; by default the README's)."""
    by_stem = {Path(s.notebook).stem: s for s in (course_path() if path is None else path)}
    order = {stem: n for n, stem in enumerate(by_stem)}
    ranked = sorted(pages, key=lambda p: (order.get(p.path.stem, len(order)), p.path.stem))
    items = "\n".join(_item(p, by_stem.get(p.path.stem)) for p in ranked)
    total = sum(by_stem[p.path.stem].minutes for p in ranked if p.path.stem in by_stem)
    timed = (f" The path below takes about {total} minutes (<code>notebooks/README.md</code> "
             "says how that was estimated)." if total else "")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{_CSP_META}'
            f"<title>streamcalls-lab: the course</title><style>{STYLE}</style></head>\n"
            "<body><main>"
            "<h1>streamcalls-lab: the course</h1>\n"
            f"<p>Each notebook as executed on <code>{html.escape(data.name)}/</code>; "
            "read it here without a kernel. The widgets show a still (the stepper's is a "
            "step part way through a call, not its first): run the notebooks in JupyterLab "
            f"(<code>make lab</code>) to move them.{timed}</p>\n"
            f"<ol>\n{items}\n</ol></main></body></html>\n")


def build_site(out: Path, data: Path | None = None,
               notebooks: Sequence[Path] | None = None) -> list[Page]:
    """Execute ``notebooks`` (the course by default) on ``data`` and write ``out``/index.html.

    ``data`` defaults to ``STREAMCALLS_DATA`` or the bundled ``data/``. Returns the pages in
    index order, each with the number of error outputs its run left (0 when all went well).
    """
    data = Path(data) if data else data_folder(REPO_NOTEBOOKS.parent / "data")
    sources = sorted(notebooks or REPO_NOTEBOOKS.glob("*.ipynb"))
    out.mkdir(parents=True, exist_ok=True)
    pages = []
    for source in sources:
        nb = static_outputs(execute(source.resolve(), data.resolve()))
        title = title_of(nb, source.stem)
        page = Page(out / f"{source.stem}.html", title, errors_in(nb))
        page.path.write_text(export(nb, title), encoding="utf-8")
        pages.append(page)
    (out / "index.html").write_text(index_page(pages, data), encoding="utf-8")
    return pages


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("build/site"))
    parser.add_argument("--data", type=Path, default=None,
                        help="folder of captures (default: STREAMCALLS_DATA or data/)")
    args = parser.parse_args(argv)
    pages = build_site(args.out, args.data)
    for page in pages:
        print(f"{page.path}  {page.title}" + (f"  ({page.errors} errors)" if page.errors else ""))
    print(f"{args.out / 'index.html'}: open it in a browser, no server needed")
    return 1 if any(p.errors for p in pages) else 0


if __name__ == "__main__":
    raise SystemExit(main())
