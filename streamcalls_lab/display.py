"""Safe HTML for notebooks and widgets: captured text is shown as data, never as markup.

Every string that came from a capture (fragments, arguments, tool names, error messages,
column names) goes through :func:`escape` before it reaches HTML. The markup itself is fixed
in this module, so a capture holding ``<script>`` or ``onerror=`` shows those characters and
runs nothing. :class:`SafeHTML` is the only way this module hands HTML out.
"""

from __future__ import annotations

import base64
import codecs
import difflib
import html
import io
import numbers
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import wording
from .accumulate import present

if TYPE_CHECKING:  # matplotlib costs half a second to import, and most users of this need none
    from matplotlib.figure import Figure

CODE_COLUMNS = ("fragment", "args", "final", "data", "so_far_text")
TRACE_COLUMNS = ("seq", "event", "kind", "block", "call_id", "tool", "fragment", "chars")
CELL_CHARS = 300
"""Characters of captured text a table cell shows before it is cut (the rest counted)."""
# Forbids scripts, plugins and remote loads in a saved page, as a second line of defence.
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """<style>
table.scl-table{border-collapse:collapse;font-size:12px;margin:4px 0}
table.scl-table th,table.scl-table td{border:1px solid #ccc;padding:2px 6px;
text-align:left!important;vertical-align:top}
table.scl-table th{background:#f2f2f2}
table.scl-table td{max-width:24em;overflow-wrap:normal;word-break:normal;white-space:normal}
table.scl-table td.scl-long{min-width:18em;max-width:48em;overflow-wrap:anywhere}
table.scl-table td.scl-num{white-space:nowrap;text-align:right!important;
font-variant-numeric:tabular-nums}
.scl-scroll{overflow-x:auto;max-width:100%}
.scl-prose code{font-family:monospace;background:#f2f2f2;padding:0 2px;border-radius:2px}
.scl-frag{white-space:pre-wrap;overflow-wrap:anywhere;background:#fff5d6;border-radius:2px;
font-family:monospace}
.scl-ws{color:#b35900}
.scl-na{color:#999;font-style:italic}
.scl-more{color:#666;font-style:italic}
.scl-diff del{background:#fcc;text-decoration:line-through}
.scl-diff ins{background:#cfc;text-decoration:none}
.scl-code{white-space:pre-wrap;overflow-wrap:anywhere;font-family:monospace;font-size:12px}
</style>"""
_SHOWN = {"\n": "↵", "\r": "␍", "\t": "⇥"}
_ACTING = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


class SafeHTML:
    """HTML assembled by this module from escaped pieces; renders itself in Jupyter."""

    __slots__ = ("html",)

    def __init__(self, markup: str) -> None:
        self.html = markup

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<SafeHTML: {len(self.html)} characters of escaped HTML>"

    def __add__(self, other: SafeHTML) -> SafeHTML:
        return SafeHTML(self.html + other.html)

    def page(self, title: str = "streamcalls-lab") -> str:
        """A standalone HTML document, with a policy that forbids any script."""
        return (
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{PAGE_CSP}\">"
            f"<title>{escape(title)}</title></head><body>\n{self.html}\n</body></html>\n"
        )

    def save(self, path: str | Path, title: str = "streamcalls-lab") -> Path:
        """Write :meth:`page` to ``path`` (UTF-8) and return the path."""
        out = Path(path)
        out.write_text(self.page(title), encoding="utf-8")
        return out


def _missing(value: Any) -> bool:
    return value is pd.NaT or present(value) is None


def escape(value: Any) -> str:
    """Any value as HTML text: ``& < > " '`` escaped, missing values as empty text."""
    return "" if _missing(value) else html.escape(str(value), quote=True)


def hidden(ch: str) -> bool:
    """A character that would act rather than show: a control, a format character (bidi
    overrides such as U+202E reorder what follows), a line or paragraph separator, a
    surrogate, a private-use or unassigned code point."""
    return unicodedata.category(ch) in _ACTING


def code_point(ch: str) -> str:
    """A character written as its escape (``\\x1b``, ``\\u202e``)."""
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" if ord(
        ch) < 0x10000 else f"\\U{ord(ch):08x}"


def visible(text: Any) -> str:
    """Escaped text with line breaks, tabs and every character that would act rather than
    show (:func:`hidden`) drawn as symbols or escapes.

    Spaces stay spaces (the ``scl-frag`` style keeps them, shaded) because a fragment's
    leading space is data: the chapter's trimming bug is exactly its loss.
    """
    if _missing(text):
        return ""
    out = []
    for ch in str(text):
        if ch in _SHOWN:
            out.append(f'<span class="scl-ws">{_SHOWN[ch]}</span>')
        elif hidden(ch):
            out.append(f'<span class="scl-ws">{code_point(ch)}</span>')
        else:
            out.append(html.escape(ch, quote=True))
    return "".join(out)


def inert(text: Any, limit: int | None = None, *, lines: bool = False) -> str:
    """Captured text made safe for a terminal, on one line: every character that would act
    (escape sequences, bidi overrides, line ends) written as its escape, a backslash
    doubled so an escape cannot be forged; cut to ``limit`` characters with an ellipsis.
    ``lines``: line feeds (with a CR just before one) and tabs are kept, for text shown as
    the lines it holds."""
    if _missing(text):
        return ""
    out = []
    text = str(text)
    for i, ch in enumerate(text):
        if lines and (ch in "\n\t" or (ch == "\r" and text[i + 1:i + 2] == "\n")):
            out.append(ch)
        else:
            out.append("\\\\" if ch == "\\" else code_point(ch) if hidden(ch) else ch)
        if limit is not None and len(out) > limit:
            return "".join(out[:limit]) + "…"
    return "".join(out)


_BYTE = re.compile("([\udc80-\udcff])")  # a byte that is not UTF-8, as surrogateescape has it


class InertStream:
    """A byte stream made inert for a terminal piece by piece, as :func:`inert` with its
    lines kept: a character split between two pieces is shown whole, a byte that is not
    UTF-8 as ``\\xNN``, a CR at a piece's end held until the next shows what follows."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._cr = ""

    def feed(self, data: bytes, final: bool = False) -> str:
        text = self._cr + self._decoder.decode(data, final)
        self._cr = ""
        if text.endswith("\r") and not final:
            text, self._cr = text[:-1], "\r"
        parts = _BYTE.split(text)
        return "".join(f"\\x{ord(p) - 0xDC00:02x}" if i % 2 else inert(p, lines=True)
                       for i, p in enumerate(parts))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def number(value: Any) -> str:
    """A number as every table and sentence of the kit writes it: a whole number as is,
    with thousands separated from 10,000 on, whatever its dtype (``12345`` and ``12345.0``
    both read ``12,345``); any other to three significant figures (``0.999``, ``3.92``), or
    to the unit from 1,000 on. Anything else is returned escaped."""
    if not _is_number(value):
        return escape(value)
    value = float(value)
    if value != value:  # NaN
        return "NA"
    if value.is_integer() and abs(value) < 1e15:
        return wording.number(int(value))  # a whole float prints as the integer would
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


_number = number


plural = wording.count
"""``n`` and the word in the form ``n`` needs (:func:`~.wording.count`)."""


def prose(text: str) -> str:
    """Plain text as escaped HTML with each `backticked` span set as code, as Markdown
    would show it (the spans are escaped too: a capture's name stays inert)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: show it as it stands
        return escape(text)
    return "".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p)
                   for i, p in enumerate(parts))


def cell(value: Any, code: bool = False, max_chars: int | None = None) -> str:
    """One table cell's content: NA marked, numbers rounded, text escaped.

    Code past ``max_chars`` characters is cut there, and the cell says how many it left out.
    """
    if _missing(value):
        return '<span class="scl-na">NA</span>'
    if code:
        text = str(value)
        more = len(text) - max_chars if max_chars is not None else 0
        if more > 0:
            return (f'<code class="scl-frag">{visible(text[:max_chars])}</code>'
                    f'<span class="scl-more"> … {more:,} more characters</span>')
        return f'<code class="scl-frag">{visible(text)}</code>'
    return _number(value)


LONG_CELL = 40
"""Characters past which a text cell may break anywhere (a turn's path, long arguments);
a shorter one breaks only at spaces, never inside a word."""


def _breakable(markup: str) -> str:
    """An escaped column name that may break after ``_`` and ``/``
    (``r2_without_longest`` as ``r2_ without_ longest``), so a table of long names fits."""
    return markup.replace("_", "_<wbr>").replace("/", "/<wbr>")


_LONG = ' class="scl-long"'


def _td(value: Any, code: bool, max_chars: int | None) -> str:
    if _missing(value):
        return f"<td>{cell(value)}</td>"
    if code:
        long = isinstance(value, str) and len(value) > LONG_CELL
        return f"<td{_LONG if long else ''}>{cell(value, True, max_chars)}</td>"
    if _is_number(value):
        return f'<td class="scl-num">{number(value)}</td>'
    text = str(value)
    long = len(text) > LONG_CELL and " " not in text
    return f"<td{_LONG if long else ''}>{escape(text)}</td>"


def table(
    df: pd.DataFrame,
    columns: Sequence[str] | None = None,
    max_rows: int = 60,
    caption: str | None = None,
    code_columns: Iterable[str] = CODE_COLUMNS,
    max_chars: int | None = CELL_CHARS,
) -> SafeHTML:
    """A dataframe as an escaped HTML table; text columns of captured data shown as code.

    A named index is shown as the first columns; an unnamed one (row numbers) is not. Past
    ``max_rows`` the table is cut and says how many rows it left out. A code cell shows at
    most ``max_chars`` characters (None: all) and counts the rest. A long name with no
    space (a turn's path) wraps anywhere, a short one only at a space, a number never, a
    column name also after ``_``: real turn names and long arguments keep the table on the
    screen, ``content_block_start`` or ``0.999`` are never cut mid-word, and a table wider
    than the page scrolls.
    """
    frame = df if columns is None else df[list(columns)]
    if any(name is not None for name in frame.index.names):
        frame = frame.reset_index()
    code = set(code_columns)
    head = "".join(f"<th>{_breakable(escape(c))}</th>" for c in frame.columns)
    body = []
    flags = [c in code for c in frame.columns]
    for values in frame.head(max_rows).itertuples(index=False, name=None):
        cells = "".join(_td(v, flag, max_chars) for v, flag in zip(values, flags, strict=True))
        body.append(f"<tr>{cells}</tr>")
    more = len(frame) - max_rows
    if more > 0:
        body.append(
            f'<tr><td class="scl-more" colspan="{len(frame.columns)}">'
            f"… {more} more rows</td></tr>"
        )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return SafeHTML(
        f'{STYLE}<div class="scl-scroll"><table class="scl-table">{cap}<thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def trace(deltas: pd.DataFrame, turn: str, max_rows: int = 200) -> SafeHTML:
    """One turn's events in wire order: the chapter's collapsed trace, as a table."""
    rows = deltas[deltas["turn"] == turn]
    cols = [c for c in TRACE_COLUMNS if c in rows.columns]
    return table(rows, cols, max_rows=max_rows, caption=f"turn {turn}")


def code_block(text: str | bytes, max_chars: int | None = 4000) -> SafeHTML:
    """Raw text (a capture's bytes, an argument string) in a pre block, escaped and cut."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    cut = max_chars is not None and len(text) > max_chars
    shown = text[:max_chars] if cut else text
    note = f'\n<span class="scl-more">… {len(text) - len(shown)} more characters</span>'
    return SafeHTML(
        f'{STYLE}<pre class="scl-code">{escape(shown)}{note if cut else ""}</pre>'
    )


def diff(expected: str, actual: str, labels: tuple[str, str] = ("sent", "got")) -> SafeHTML:
    """Character-level difference: what ``actual`` lost (struck) and gained (green).

    Made for comparing the arguments a provider sent with what a handler assembled, so a
    missing space inside a string is as visible as a missing brace.
    """
    matcher = difflib.SequenceMatcher(None, expected, actual, autojunk=False)
    parts, lost, gained = [], 0, 0
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            parts.append(visible(expected[a0:a1]))
            continue
        if a1 > a0:
            lost += a1 - a0
            parts.append(f"<del>{visible(expected[a0:a1])}</del>")
        if b1 > b0:
            gained += b1 - b0
            parts.append(f"<ins>{visible(actual[b0:b1])}</ins>")
    if lost == gained == 0:
        summary = f"{escape(labels[1])} is identical to {escape(labels[0])}"
    else:
        summary = (
            f"{escape(labels[1])} differs from {escape(labels[0])}: "
            f"{lost} characters missing, {gained} added"
        )
    return SafeHTML(
        f'{STYLE}<div class="scl-diff"><div>{summary}</div>'
        f'<code class="scl-frag">{"".join(parts)}</code></div>'
    )


def figure_png(fig: Figure, dpi: int = 100) -> bytes:
    """A figure as PNG bytes (no pyplot state involved)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def figure_title(fig: Figure) -> str:
    """What a figure says it shows, as its alt text: the suptitle and each axes' titles
    (centre, left, right), inert, joined; ``"a figure without a title"`` when it has none."""
    sup = fig._suptitle.get_text() if fig._suptitle is not None else ""
    titles = [sup] + [ax.get_title(loc) for ax in fig.axes for loc in ("center", "left", "right")]
    said = [" ".join(t.split()) for t in titles if t and t.strip()]
    return inert("; ".join(dict.fromkeys(said))) or "a figure without a title"


def describe_figures() -> None:
    """Have matplotlib's inline backend label each figure it shows with
    :func:`figure_title` (``alt`` in the output's metadata), as `make site` does in every
    kernel it runs."""
    from matplotlib_inline import backend_inline

    fetch = backend_inline._fetch_figure_metadata
    if getattr(fetch, "describes", False):
        return

    def with_alt(fig: Figure) -> dict[str, object]:
        return {**(fetch(fig) or {}), "alt": figure_title(fig)}

    with_alt.describes = True  # type: ignore[attr-defined]
    backend_inline._fetch_figure_metadata = with_alt


def _is_figure(obj: object) -> bool:
    figure = sys.modules.get("matplotlib.figure")  # no figure exists before it is imported
    return figure is not None and isinstance(obj, figure.Figure)


def static(obj: Figure | pd.DataFrame | SafeHTML, path: str | Path | None = None) -> SafeHTML:
    """A fallback that needs no kernel or widget: a figure as an inline PNG, a table as HTML.

    Use it where interactive output will not survive (a static export, a Voila page without
    widgets). With ``path``, also write the file: ``.png`` for a figure, ``.html`` for any.
    """
    png = None
    if _is_figure(obj):
        png = figure_png(obj)
        data = base64.b64encode(png).decode("ascii")
        out = SafeHTML(f'<img alt="{escape(figure_title(obj))}" '
                       f'src="data:image/png;base64,{data}">')
    elif isinstance(obj, pd.DataFrame):
        out = table(obj)
    elif isinstance(obj, SafeHTML):
        out = obj
    else:
        raise TypeError(f"no static form for {type(obj).__name__}")
    if path is not None:
        target = Path(path)
        if target.suffix == ".png":
            if png is None:
                raise ValueError("only a figure can be saved as .png")
            target.write_bytes(png)
        else:
            out.save(target)
    return out
