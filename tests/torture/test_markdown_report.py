"""The torture report as Markdown holds captured text (examples, what a client printed, its
stderr) as text: rendered, no value breaks out of its code span or cell into markup or live
HTML, whatever backticks, tags, line breaks or pipes it holds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from streamcalls_lab.check import REPORT_COLUMNS
from streamcalls_lab.torture import code_span, markdown, plain_text

HOSTILE = {
    "double backtick": "a `` <img src=x onerror=alert(1)> `` b",
    "backtick runs": "``` ```` ` <img src=x onerror=alert(2)>",
    "backtick at the ends": "`<img src=x onerror=alert(3)>`",
    "line breaks": "x\n<img src=x onerror=alert(4)>\r\n\n| a | b |\u2028y",
    "pipes": "p|q\\|r || <b>bold</b>",
    "a script": "</code><script>alert(5)</script>",
    "an autolink and an entity": "<javascript:alert(6)> &lt;img&gt; &#60;",
    "emphasis and links": "*a* _b_ [c](javascript:alert(7)) ![d](x)",
}
_MD = MarkdownIt("commonmark").enable("table")  # raw HTML on, as a renderer may have it


def _inline(tokens: list[Token]) -> list[Token]:
    return [c for t in tokens if t.type == "inline" for c in t.children or []]


def _assert_no_markup(tokens: list[Token]) -> None:
    kinds = {t.type for t in tokens} | {t.type for t in _inline(tokens)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image", "em_open",
                        "strong_open", "code_block", "fence"}, kinds


def _report(value: str) -> pd.DataFrame:
    row = dict.fromkeys(REPORT_COLUMNS, value) | {"class": "other", "failures": 1}
    return pd.DataFrame([row], columns=list(REPORT_COLUMNS))


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE)
def test_a_hostile_value_in_a_report_renders_as_no_html_or_markup(value: str) -> None:
    tokens = _MD.parse(markdown(_report(value)))
    _assert_no_markup(tokens)
    assert "<img" not in _MD.render(markdown(_report(value))).replace("&lt;img", "")


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE)
def test_each_verbatim_value_is_one_code_span_holding_it_whole(value: str) -> None:
    shown = " ".join(value.replace("\r\n", "\n").replace("\u2028", "\n").split("\n"))
    codes = [t.content for t in _inline(_MD.parse(markdown(_report(value))))
             if t.type == "code_inline"]
    assert codes == [shown] * 3  # example, expected, got


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE)
def test_a_plain_cell_renders_as_its_text(value: str) -> None:
    tokens = _MD.parse(f"| h |\n|---|\n| {plain_text(value)} |")
    _assert_no_markup(tokens)
    cell = _inline(tokens[-6:])  # the body's one cell
    text = "".join(t.content for t in cell if t.type == "text")
    shown = " ".join(value.replace("\r\n", "\n").replace("\u2028", "\n").split("\n"))
    assert text == shown.strip()


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE)
def test_a_code_span_outside_a_table_holds_the_value(value: str) -> None:
    [code] = [t for t in _inline(_MD.parse(code_span(value.replace("|", "")))) if
              t.type == "code_inline"]
    assert "\n" not in code.content and code.content.replace(" ", "") == value.replace(
        "|", "").replace("\r\n", "").replace("\n", "").replace("\u2028", "").replace(" ", "")


def test_the_clients_page_shows_a_client_s_stderr_as_text() -> None:
    """docs/clients.md's summary row names why a client did not start: its stderr."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "torture_clients.py"
    spec = importlib.util.spec_from_file_location("torture_clients", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    row = script.summary_row("c", "`x`", "1.0", ["openai-chat"], 3, 3,
                             "did not start: " + HOSTILE["double backtick"], 0)
    tokens = _MD.parse("| a | b | c | d | e | f | g | h |\n|---|---|---|---|---|---|---|---|\n"
                       + row)
    _assert_no_markup(tokens)
    assert sum(t.type == "td_open" for t in tokens) == 8


def test_a_class_name_is_written_as_it_reads() -> None:
    assert plain_text("parse_to_finish") == "parse_to_finish"
    assert plain_text("_a_ b_ _c") == "\\_a\\_ b\\_ \\_c"
