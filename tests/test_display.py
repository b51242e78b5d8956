"""display: captured text always arrives as escaped text, never as markup."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from streamcalls_lab import display

XSS = '<img src=x onerror=window.__xss=1><script>window.__xss=2</script>"\'&'
OUR_TAGS = {"style", "table", "caption", "thead", "tbody", "tr", "th", "td", "code", "span",
            "div", "del", "ins", "pre", "wbr"}


class Tags(HTMLParser):
    """Every start tag and attribute a browser would see."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)


def tags_of(markup: display.SafeHTML) -> Tags:
    parser = Tags()
    parser.feed(str(markup))
    return parser


@given(st.text())
def test_escape_round_trips_and_leaves_no_markup_character(text: str) -> None:
    escaped = display.escape(text)
    assert not set(escaped) & set("<>\"'")
    assert html.unescape(escaped) == text


def test_escape_shows_missing_values_as_nothing() -> None:
    assert [display.escape(v) for v in (None, pd.NA, float("nan"))] == ["", "", ""]


def test_visible_draws_line_breaks_tabs_and_control_characters_and_keeps_spaces() -> None:
    shown = display.visible(" a\nb\tc\x00")
    assert shown.startswith(" a")
    assert "↵" in shown and "⇥" in shown and "\\x00" in shown
    assert "\n" not in shown and "\x00" not in shown


def test_table_renders_hostile_cells_column_names_and_caption_as_text() -> None:
    df = pd.DataFrame({XSS: [XSS], "fragment": [XSS]})
    markup = display.table(df, caption=XSS)
    parsed = tags_of(markup)
    assert parsed.tags <= OUR_TAGS
    assert parsed.attrs <= {"class", "colspan"}
    assert str(markup).count(html.escape(XSS, quote=True)) >= 2


def test_table_says_how_many_rows_it_left_out() -> None:
    markup = str(display.table(pd.DataFrame({"n": range(10)}), max_rows=3))
    assert markup.count("<tr>") == 1 + 3 + 1 and "… 7 more rows" in markup


def test_table_marks_missing_values_and_keeps_a_named_index() -> None:
    df = pd.DataFrame({"x": pd.array([1, None], dtype="Int64")},
                      index=pd.Index(["p", "q"], name="provider"))
    markup = str(display.table(df))
    assert "<th>provider</th>" in markup and '<span class="scl-na">NA</span>' in markup


def test_table_rounds_floats_and_keeps_integers_whole() -> None:
    markup = str(display.table(pd.DataFrame({"a": [6.968372], "b": [23195.0], "c": [7]})))
    assert all(f'<td class="scl-num">{v}</td>' in markup for v in ("6.97", "23,195", "7"))


def test_a_whole_number_reads_the_same_whatever_its_dtype() -> None:
    assert display.number(12345) == display.number(12345.0) == "12,345"
    assert display.number(np.int64(20)) == display.number(20.0) == "20"
    assert display.number(0.99912) == "0.999" and display.number(float("nan")) == "NA"


def test_a_number_cell_never_wraps() -> None:
    markup = str(display.table(pd.DataFrame({"r2": [0.999]})))
    assert '<td class="scl-num">0.999</td>' in markup
    assert "td.scl-num{white-space:nowrap" in markup


def test_a_short_name_is_never_broken_mid_word() -> None:
    markup = str(display.table(pd.DataFrame({"event": ["content_block_start"]})))
    assert "<td>content_block_start</td>" in markup
    assert "td{max-width:24em;overflow-wrap:normal;word-break:normal;white-space:normal}" in markup


def test_a_header_may_break_after_its_underscores() -> None:
    markup = str(display.table(pd.DataFrame({"r2_without_longest": [1]})))
    assert "<th>r2_<wbr>without_<wbr>longest</th>" in markup


def test_plural_agrees_with_its_count() -> None:
    assert [display.plural(n, "kind") for n in (0, 1, 2)] == ["0 kinds", "1 kind", "2 kinds"]
    assert display.plural(12000, "choice", "choices") == "12,000 choices"


def test_prose_sets_backticked_spans_as_code_and_escapes_them() -> None:
    shown = display.prose("`<b>` holds `data/`, not <i>")
    assert shown == "<code>&lt;b&gt;</code> holds <code>data/</code>, not &lt;i&gt;"
    assert display.prose("a lone ` stays") == "a lone ` stays"


def test_trace_lists_one_turns_events_only() -> None:
    deltas = pd.DataFrame({"turn": ["a", "b"], "seq": [0, 0], "kind": ["x", "y"]})
    markup = str(display.trace(deltas, "a"))
    assert "<td>x</td>" in markup and "<td>y</td>" not in markup


def test_diff_strikes_the_spaces_a_trimming_handler_lost() -> None:
    sent = '{"summary": "urgent request from ops"}'
    got = '{"summary": "urgent requestfrom ops"}'
    markup = str(display.diff(sent, got))
    assert "<del> </del>" in markup
    assert "1 characters missing, 0 added" in markup


def test_diff_says_when_nothing_differs() -> None:
    assert "got is identical to sent" in str(display.diff("{}", "{}"))


def test_diff_escapes_both_sides() -> None:
    assert tags_of(display.diff(XSS, XSS + "<b>x</b>")).tags <= OUR_TAGS


def test_code_block_escapes_bytes_and_says_what_it_cut() -> None:
    markup = str(display.code_block(b"data: <script>\n" * 10, max_chars=20))
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert "… 130 more characters" in markup


def test_saved_page_forbids_scripts(tmp_path: Path) -> None:
    page = display.table(pd.DataFrame({"a": [1]})).save(tmp_path / "t.html").read_text()
    assert f'content="{display.PAGE_CSP}"' in page and "script-src" not in page


def test_static_turns_a_figure_into_an_inline_png_and_writes_it(tmp_path: Path) -> None:
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    markup = display.static(fig, tmp_path / "f.png")
    plt.close(fig)
    assert str(markup).startswith('<img alt="a figure without a title" '
                                  'src="data:image/png;base64,iVBORw0KGgo')
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG")


def test_a_static_figure_is_described_by_its_own_titles_made_inert() -> None:
    fig, (left, right) = plt.subplots(1, 2)
    fig.suptitle('Fragments of "<b>x</b>"\u202e')
    left.set_title("sizes")
    right.set_title("sizes")  # said once
    markup = str(display.static(fig))
    plt.close(fig)
    assert markup.startswith('<img alt="Fragments of &quot;&lt;b&gt;x&lt;/b&gt;&quot;\\u202e; '
                             'sizes" ')


def test_static_turns_a_dataframe_into_a_table() -> None:
    assert "<table" in str(display.static(pd.DataFrame({"a": [1]})))


def test_static_refuses_a_png_of_a_table(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="only a figure"):
        display.static(pd.DataFrame({"a": [1]}), tmp_path / "t.png")


def test_static_refuses_what_it_cannot_render() -> None:
    with pytest.raises(TypeError, match="no static form"):
        display.static("<b>raw</b>")  # type: ignore[arg-type]


def test_table_leaves_out_an_unnamed_index() -> None:
    markup = str(display.table(pd.DataFrame({"x": [1, 2]}, index=[7, 3])))
    assert "<th>index</th>" not in markup and "<td>7</td>" not in markup


def test_a_long_argument_is_cut_in_its_cell_and_says_how_much_is_left_out() -> None:
    args = '{"body": "' + "x" * 1000 + '"}'
    markup = str(display.table(pd.DataFrame({"args": [args]}), max_chars=100))
    assert "x" * 90 in markup and "x" * 101 not in markup
    assert f"… {len(args) - 100:,} more characters" in markup


def test_a_short_argument_is_shown_whole() -> None:
    markup = str(display.table(pd.DataFrame({"args": ['{"a": 1}']})))
    assert "more characters" not in markup


def test_no_cut_when_asked_for_every_character() -> None:
    args = "y" * 5000
    assert args in str(display.table(pd.DataFrame({"args": [args]}), max_chars=None))


def test_a_cut_never_splits_an_escape_into_live_markup() -> None:
    args = "a" * 95 + "<script>alert(1)</script>"
    markup = str(display.table(pd.DataFrame({"args": [args]}), max_chars=100))
    assert "<script" not in markup and "&lt;scr" in markup


def test_every_cell_may_wrap_and_the_table_scrolls_rather_than_push_columns_off() -> None:
    markup = str(display.table(pd.DataFrame({"turn": ["openai-chat/" + "a_" * 60]})))
    assert "overflow-wrap:anywhere" in markup and 'class="scl-scroll"' in markup


def test_an_integer_and_a_whole_float_print_alike() -> None:
    markup = str(display.table(pd.DataFrame({"a": [23195], "b": [23195.0], "c": [7810]})))
    assert markup.count(">23,195</td>") == 2 and ">7810</td>" in markup
