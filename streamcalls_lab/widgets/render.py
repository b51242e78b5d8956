"""HTML pieces the views share; every captured or typed string goes through ``display.visible``.

The markup is fixed here and the text inside it is escaped, so a value holding ``<script>``
or ``onerror=`` shows those characters and runs nothing, in a live widget, in a Voila app
and in a saved notebook alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..breaker import Span
from ..display import STYLE, SafeHTML, escape, visible

CSS = STYLE + """<style>
.scl-view{font-size:13px;line-height:1.5}
.scl-view h4{margin:8px 0 2px 0;font-size:13px}
.scl-view mark.scl-lost{background:#f6b8b8;border-radius:2px}
.scl-view mark.scl-got{background:#b9e6b9;border-radius:2px}
.scl-view mark.scl-gap{background:#f6b8b8;color:#900;padding:0 1px}
.scl-view mark.scl-new{background:#ffe08a;border-radius:2px}
.scl-view .scl-piece{white-space:pre-wrap;word-break:break-all;font-family:monospace;
background:#fff5d6;border-right:2px solid #c60;padding:0 1px}
.scl-view .scl-piece.scl-alt{background:#e4edff}
.scl-view .scl-bad{color:#a00}
.scl-view .scl-ok{color:#070}
.scl-view .scl-note{color:#555}
.scl-view tr.scl-focus>td{background:#fffbe6}
.scl-view .scl-computing{font-style:italic}
.scl-view .scl-cp{margin:0 .15em}
</style>"""


_PICTOGRAPH = re.compile("[\U0001F000-\U0001FAFF\uFE0F]")
"""Characters only an emoji font draws (pictographs, skin tones, the emoji presentation
selector): the kit ships none, so a page without one would show an empty box."""


def shown(text: Any) -> str:
    """:func:`~streamcalls_lab.display.visible`, with every character only an emoji font has
    written as its code point (``U+1F44D``), so no glyph needs a font the kit does not ship."""
    return _PICTOGRAPH.sub(
        lambda m: f'<span class="scl-ws scl-cp">U+{ord(m.group()):04X}</span>', visible(text))


class View:
    """A view shown live by its ``widget`` and, in the same bundle, as its escaped HTML
    (:meth:`still`), which is what a saved notebook or a page without a kernel shows."""

    widget: Any

    def static(self) -> SafeHTML:
        raise NotImplementedError

    def still(self) -> SafeHTML:
        """What a page without a kernel shows: :meth:`static` unless a view knows a more
        telling moment (the stepper: a call half sent rather than step 0)."""
        return self.static()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.still().html
        return bundle


def view(body: str, cls: str) -> str:
    """A view's whole output: the style, then ``body`` (already escaped) in one div."""
    return f'{CSS}<div class="scl-view {cls}">{body}</div>'


def code(text: Any, cls: str = "") -> str:
    """Captured text as code: escaped, whitespace visible."""
    extra = f" {cls}" if cls else ""
    return f'<code class="scl-frag{extra}">{shown(text)}</code>'


def marked(spans: Iterable[Span], side: str) -> str:
    """One side of a diff as code, what differs in ``<mark>``: ``sent`` marks what the
    handler lost or changed, ``got`` what it added or changed (and a caret where it lost)."""
    parts = []
    for span in spans:
        text = span.sent if side == "sent" else span.got
        if span.op == "equal":
            parts.append(shown(text))
        elif text:
            parts.append(f'<mark class="scl-{"lost" if side == "sent" else "got"}">'
                         f"{shown(text)}</mark>")
        elif side == "got":
            parts.append(f'<mark class="scl-gap" title="{len(span.sent)} characters missing">'
                         "‸</mark>")
    return f'<code class="scl-frag">{"".join(parts)}</code>'


def pieces(fragments: Sequence[str]) -> str:
    """Fragments side by side, alternately shaded, so every boundary shows."""
    if not fragments:
        return '<span class="scl-note">(no argument fragment sent)</span>'
    return "".join(
        f'<code class="scl-piece{" scl-alt" if i % 2 else ""}">{shown(f)}</code>'
        for i, f in enumerate(fragments))


def note(text: str) -> str:
    """A remark beside a view's output, escaped."""
    return f'<span class="scl-note">{escape(text)}</span>'


def row(cells: Iterable[str], cls: str = "") -> str:
    """A table row of cells that are already HTML."""
    attr = f' class="{cls}"' if cls else ""
    return f"<tr{attr}>{''.join(f'<td>{c}</td>' for c in cells)}</tr>"


def table(head: Iterable[str], rows: Iterable[str], cls: str) -> str:
    """A table with escaped headings and rows made by :func:`row`."""
    ths = "".join(f"<th>{escape(h)}</th>" for h in head)
    return (f'<table class="scl-table {cls}"><thead><tr>{ths}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")
