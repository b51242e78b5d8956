"""stats: sizes, fits, escapes, timing and anomalies, on hand-built turns with known answers."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import stats, timing

from .conftest import CAPTURES
from .support import turns
from .support.sse_turns import chat


def load_turns(**captures: bytes) -> pd.DataFrame:
    """Several in-memory captures as one load() table, each turn named by its keyword."""
    return pd.concat([scl.load(body, name=name) for name, body in captures.items()],
                     ignore_index=True)


def calls_of(*calls: list[str], stop_calls: bool = True) -> pd.DataFrame:
    """The calls() table of one Anthropic turn per call, each a call of ``f`` sent in the
    fragments given (turns t0, t1, ...)."""
    bodies = [turns.anthropic([], [("f", parts)], stop_calls=stop_calls) for parts in calls]
    return scl.calls(load_turns(**{f"t{i}": body for i, body in enumerate(bodies)}))


def test_fragments_keeps_only_non_empty_fragments_of_the_kind() -> None:
    deltas = load_turns(a=turns.anthropic(["Hi"], [("f", ["", '{"a"', ": 1}"])]))
    assert stats.fragments(deltas)["fragment"].tolist() == ['{"a"', ": 1}"]


def test_fragments_rejects_a_kind_that_is_not_a_fragment() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        stats.fragments(load_turns(a=turns.anthropic(["Hi"])), "call_start")


def test_size_summary_measures_each_provider_separately() -> None:
    deltas = load_turns(
        a=turns.anthropic([], [("f", ['{"ab', 'cd":', ' 1}'])]),
        c=turns.chat([(0, "call_1", "f", ['{"', "ab", '":', "1}"])]),
    )
    summary = stats.size_summary(deltas)
    assert summary.loc["anthropic-messages", "median"] == 4
    assert summary.loc["openai-chat", "median"] == 2


def test_delta_fit_recovers_a_constant_fragment_size() -> None:
    short = ['{"a":', ' "xy"}']  # 11 chars in 2 fragments
    long = ['{"a":', ' "xy', 'zwvut', 'srqpo', 'nm"}']  # 23 chars in 5 fragments
    table = calls_of(short, long)
    fit = stats.delta_fit(table).loc["anthropic-messages"]
    assert fit["calls"] == 2
    assert fit["slope"] == pytest.approx((11 * 2 + 23 * 5) / (11**2 + 23**2))
    assert fit["median_chars_per_delta"] == pytest.approx((5.5 + 4.6) / 2)


def test_delta_fit_ignores_calls_that_never_finished() -> None:
    table = scl.calls(load_turns(
        done=turns.anthropic([], [("f", ['{"a": 1}'])]),
        cut=turns.anthropic([], [("f", ['{"a": ', "1, ", '"b": 2'])], stop_calls=False),
    ))
    assert stats.delta_fit(table).loc["anthropic-messages", "calls"] == 1


def test_chapter_comparison_predicts_the_chapters_two_calls_from_the_fit() -> None:
    parts = ['{"q": "', "abcde", "fghij", 'kl"}']  # 21 chars in 4 deltas
    table = calls_of(parts)
    row = stats.chapter_comparison(table).loc["anthropic-messages"]
    assert row["chars_per_delta"] == pytest.approx(21 / 4)
    assert row["ratio"] == pytest.approx(21 / 4 / 13)
    assert row["deltas_at_610"] == pytest.approx(610 * 4 / 21)
    assert row["chapter_at_610"] == 47


def test_escape_overhead_orders_wire_then_string_then_compact_length() -> None:
    args = '{"say": "a \\"quoted\\" word"}'  # 28 chars; each \" is \\\" on the wire
    table = calls_of([args])
    row = stats.escape_overhead(table).iloc[0]
    assert row["chars"] == len(args) == 28
    assert row["wire_chars"] == 28 + args.count('"') + args.count("\\")
    assert row["compact_chars"] == 27  # the space after the colon is formatting


def test_first_argument_times_reads_the_timing_sidecar(tmp_path: Path) -> None:
    body = turns.anthropic([], [("f", ['{"a":', " 1}"])])
    frames = body.split(b"\n\n")[:-1]
    path = tmp_path / "timed.sse"
    path.write_bytes(body)
    # message_start at 0.0, block start at 0.5, first fragment at 2.0, then one frame a second
    times = [0.0, 0.5, 2.0, 3.0, 4.0, 5.0, 6.0]
    timing.write(path, [(t, len(f) + 2) for t, f in zip(times, frames, strict=True)])
    row = stats.first_argument_times(scl.load(path)).iloc[0]
    assert (row["t_start"], row["t_first_arg"], row["t_stop"]) == (0.5, 2.0, 4.0)
    assert row["wait"] == pytest.approx(1.5)


def test_first_argument_times_are_nan_without_timing() -> None:
    times = stats.first_argument_times(load_turns(a=turns.anthropic([], [("f", ["{}"])])))
    assert len(times) == 1 and math.isnan(times["wait"].iloc[0])


def test_with_call_numbers_starts_a_new_call_when_a_block_is_announced_again() -> None:
    deltas = load_turns(a=turns.anthropic([], [("f", ["{}"]), ("g", ["[]"])], indexes=[0, 0]))
    numbered = stats.with_call_numbers(deltas)
    args = numbered[numbered["kind"] == "args_delta"]
    assert args["call"].tolist() == [1, 2]


def anomaly_kinds(**captures: bytes) -> list[str]:
    return stats.call_problems(load_turns(**captures))["problem"].tolist()


def test_a_clean_turn_has_no_anomaly() -> None:
    assert anomaly_kinds(a=turns.anthropic(["Hi"], [("f", ['{"a"', ": 1}"])])) == []


def test_anomalies_find_a_call_without_its_stop() -> None:
    cut = turns.anthropic([], [("f", ['{"a"', ": 1"])], stop_calls=False)
    assert anomaly_kinds(a=cut) == ["missing_stop"]


def test_anomalies_find_two_calls_merged_into_one_buffer() -> None:
    merged = turns.chat([(0, "call_1", "f", ['{"a":', "1}"]), (0, None, None, ['{"b":', "2}"])])
    assert anomaly_kinds(c=merged) == ["merged_calls"]


def test_a_block_index_announced_twice_is_no_call_problem_but_a_producer_quirk() -> None:
    reused = turns.anthropic([], [("f", ['{"a":1}']), ("g", ['{"b":2}'])], indexes=[0, 0])
    assert anomaly_kinds(a=reused) == []
    assert scl.anomalies(load_turns(a=reused))["anomaly"].tolist() == ["index_reuse"]


def test_a_chat_index_reused_is_a_quirk_and_finish_reason_still_ends_both_calls() -> None:
    """finish_reason ends the message, so the call whose index was taken over is done too."""
    reused = turns.chat([(0, "call_1", "f", ['{"a":1}']), (0, "call_2", "g", ['{"b":2}'])])
    deltas = load_turns(c=reused)
    assert anomaly_kinds(c=reused) == []
    assert scl.calls(deltas)["complete"].tolist() == [True, True]
    found = scl.anomalies(deltas)
    assert found[["anomaly", "call_id"]].values.tolist() == [["index_reuse", "call_2"]]


def test_the_old_name_warns_and_gives_the_old_column() -> None:
    cut = turns.anthropic([], [("f", ['{"a"', ": 1"])], stop_calls=False)
    with pytest.warns(DeprecationWarning, match="call_problems"):
        found = stats.anomalies(load_turns(a=cut))
    assert found["anomaly"].tolist() == ["missing_stop"]


def test_anomalies_find_a_done_event_that_disagrees_with_the_fragments() -> None:
    body = turns.responses(['{"a":', "1}"], final='{"a":2}')
    assert anomaly_kinds(r=body) == ["done_mismatch"]


def test_anomalies_report_error_rows_with_their_offset() -> None:
    body = turns.anthropic([], [("f", ["{}"])]) + b"data: {not json}\n\n"
    deltas = scl.load(body, name="bad", strict=False)
    found = stats.call_problems(deltas)
    assert found["problem"].tolist() == ["error"]
    assert found["detail"].iloc[0].startswith(f"at byte {len(body) - 18}:")


def test_prefix_table_shows_an_argument_prefix_parses_only_when_whole() -> None:
    deltas = load_turns(a=turns.anthropic(["Hel", "lo"], [("f", ['{"a":', ' "b', '"}'])]))
    table = stats.prefix_table(deltas, "a")
    args = table[table["kind"] == "args_delta"]
    assert args["parses"].tolist() == [False, False, True]
    assert args["so_far"].tolist() == [5, 8, 10]
    assert table[table["kind"] == "text_delta"]["parses"].isna().all()


def test_prefix_table_keeps_each_calls_buffer_apart() -> None:
    deltas = load_turns(a=turns.anthropic([], [("f", ['{"a":', "1}"]), ("g", ["[1,", "2]"])]))
    parses = stats.prefix_table(deltas, "a")["parses"].tolist()
    assert parses == [False, True, False, True]


def test_pick_turn_prefers_text_and_several_fragments_and_skips_broken_turns() -> None:
    tiny = turns.anthropic(["Hi"], [("f", ["{}"])])
    good = turns.anthropic(["Hi", " there"], [("f", ['{"a"', ": 1", "}"])])
    broken = turns.anthropic(["Hi"], [("f", ['{"a"', ": 1", "}"])]) + b"data: {x}\n\n"
    deltas = pd.concat([load_turns(tiny=tiny, good=good),
                        scl.load(broken, name="broken", strict=False)], ignore_index=True)
    assert stats.pick_turn(deltas) == "good"


def test_pick_turn_raises_when_no_turn_has_a_call() -> None:
    with pytest.raises(ValueError, match="no turn with a tool call"):
        stats.pick_turn(load_turns(a=turns.anthropic(["Hi"])))


@pytest.mark.captures
def test_real_recordings_cut_anthropic_arguments_coarser_than_openai(captures: Path) -> None:
    """The curator's finding, kept true: medians near 7 (Anthropic) and near 2-3 (OpenAI)."""
    deltas = scl.load(CAPTURES, strict=False)
    median = stats.size_summary(deltas)["median"]
    assert 5 <= median["anthropic-messages"] <= 9
    assert median["openai-chat"] <= 4 and median["openai-responses"] <= 4


def test_describe_comparison_says_how_far_each_provider_is_from_the_chapter() -> None:
    parts = ['{"q": "', "abcde", "fghij", 'kl"}']  # 21 chars in 4 deltas: 5.25 a delta
    table = calls_of(parts)
    comparison = stats.chapter_comparison(table)
    (line,) = stats.describe_comparison(comparison)
    assert line.startswith("anthropic-messages: 5.25 characters per delta over 1 call, 0.404 times")
    assert "a 610-character call about 116 (chapter: 47)" in line


def test_describe_comparison_calls_a_near_figure_close() -> None:
    parts = ['{"q": "abcd', 'efghijklm"}']  # 22 chars in 2 deltas: 11 a delta
    table = calls_of(parts)
    comparison = stats.chapter_comparison(table)
    assert "close to the chapter's 13" in stats.describe_comparison(comparison)[0]


def test_inventory_counts_turns_calls_and_sound_calls_per_provider() -> None:
    deltas = load_turns(
        a=turns.anthropic(["Hi"], [("f", ["{}"]), ("g", ['{"a":', "1}"])]),
        b=turns.anthropic([], [("f", ['{"a"'])], stop_calls=False),
        c=turns.chat([(0, "call_1", "f", ["{}"])]),
    )
    inv = stats.inventory(deltas)
    assert inv.loc["anthropic-messages", ["turns", "calls", "complete", "valid_json"]].tolist() \
        == [2, 3, 2, 2]
    assert inv.loc["openai-chat", "calls"] == 1


def test_tool_summary_puts_the_most_called_tool_first() -> None:
    deltas = load_turns(a=turns.anthropic([], [("f", ["{}"]), ("g", ["{}"]), ("g", ["[]"])]))
    summary = stats.tool_summary(scl.calls(deltas))
    assert summary.index.tolist() == ["g", "f"] and summary["calls"].tolist() == [2, 1]


def test_prefix_table_skips_a_fragment_the_wire_left_out() -> None:
    """A Chat chunk that repeats the id without arguments adds nothing to the buffer."""
    first = {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f",
                                                                       "arguments": ""}}]}
    args = {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}
    again = {"tool_calls": [{"index": 0, "id": "call_1", "function": {}}]}
    deltas = scl.load(chat(first, args, again), name="t")
    table = stats.prefix_table(deltas, "t")
    assert list(table.so_far) == [2, 2] and list(table.parses) == [True, True]


def test_a_provider_whose_every_call_came_in_one_fragment_is_said_to_send_calls_whole() -> None:
    whole = '{"q": "a long query in one piece"}'
    table = scl.calls(load_turns(
        a=turns.anthropic([], [("f", [whole])]),
        b=turns.anthropic([], [("g", ['{"x": 1}'])]),
        c=turns.chat([(0, "call_1", "g", ['{"', "ab", '":', "1}"])]),
    ))
    verdicts = stats.delivery(table)
    assert verdicts.loc["anthropic-messages", "delivery"] == "whole"
    assert verdicts.loc["anthropic-messages", "longest"] == len(whole)
    assert verdicts.loc["openai-chat", "delivery"] == "streamed"
    assert stats.sent_whole(table) == ["anthropic-messages"]


def test_a_provider_with_only_unfinished_calls_has_no_delivery_verdict() -> None:
    table = calls_of(['{"a": ', "1"], stop_calls=False)
    assert stats.delivery(table).loc["anthropic-messages", "delivery"] == "no finished calls"


def test_one_streamed_call_among_whole_ones_makes_a_provider_streamed() -> None:
    table = calls_of(['{"x": 1}'], ['{"x":', ' 2}'])
    assert stats.delivery(table).loc["anthropic-messages", "delivery"] == "streamed"


def test_delta_fit_fits_no_line_through_calls_sent_whole() -> None:
    table = calls_of(['{"q": "abc"}'], ['{"q": "abcdefghij"}'])
    row = stats.delta_fit(table).loc["anthropic-messages"]
    assert not row["fitted"] and math.isnan(row["slope"]) and row["calls"] == 2


def test_delta_fit_fits_no_line_through_fewer_calls_than_asked() -> None:
    table = calls_of(['{"q":', ' "abc"}'])
    assert stats.delta_fit(table).loc["anthropic-messages", "fitted"]
    row = stats.delta_fit(table, min_calls=2).loc["anthropic-messages"]
    assert not row["fitted"] and math.isnan(row["chars_per_delta"])


def test_delta_fit_gives_the_range_its_line_holds_over() -> None:
    table = calls_of(['{"a":', ' 1}'], ['{"a":', ' "xyz', 'uvw"}'])
    row = stats.delta_fit(table).loc["anthropic-messages"]
    assert (row["min_chars"], row["max_chars"]) == (8, 15)


def test_r2_without_the_longest_call_shows_a_fit_carried_by_one_call() -> None:
    calls = [["{", '"a"', ":", " 1", "}"], ['{"abcdefgh":', ' "ijklmnopq"}'],  # short calls:
             ["{", '"a": 12}'], ['{"abcdefghijklmn', 'opqrst": 1}'],  # length says little
             ['{"a": "', *["x" * 20] * 50, '"}']]  # one long call makes the line look straight
    table = calls_of(*calls)
    row = stats.delta_fit(table).loc["anthropic-messages"]
    assert row["r2"] > 0.95 > row["r2_without_longest"]


def test_describe_comparison_says_a_whole_sender_takes_one_delta_at_any_length() -> None:
    table = calls_of(['{"q": "abc"}'])
    comparison = stats.chapter_comparison(table)
    assert comparison.loc["anthropic-messages", "deltas_at_610"] == 1
    (line,) = stats.describe_comparison(comparison)
    assert "sent its one finished call whole" in line and "takes 1 delta" in line


def test_describe_comparison_names_too_few_calls_and_extrapolation() -> None:
    parts = ['{"q": "', "abcde", "fghij", 'kl"}']
    table = calls_of(parts)
    assert "too few to fit" in stats.describe_comparison(
        stats.chapter_comparison(table, min_calls=2))[0]
    assert "is an extrapolation" in stats.describe_comparison(
        stats.chapter_comparison(table))[0]


def test_padding_counts_the_spaces_before_each_data_lines_closing_brace() -> None:
    body = (b'event: a\ndata: {"x": 1}   }\n\n'.replace(b"1}   }", b"1}") +
            b'data: {"x": 1}\n\ndata: {"x": {"y": 2}   }\n\ndata: {"x": 3}  }\n\n'
            b"data: [DONE]\n\n")
    counts = stats.padding(body)
    assert counts.to_dict() == {0: 2, 2: 1, 3: 1}


def test_pick_turn_can_fall_back_to_a_turn_without_a_call() -> None:
    deltas = load_turns(a=turns.anthropic(["Hi"]), b=turns.anthropic(["Hi", " there"]))
    assert stats.pick_turn(deltas, require_call=False) in {"a", "b"}


def test_pick_turn_takes_a_broken_turn_with_a_call_before_giving_up() -> None:
    cut = turns.anthropic(["Hi"], [("f", ['{"a"', ": 1", "}"])])[:-20]
    deltas = scl.load(cut, name="cut", strict=False)
    assert stats.pick_turn(deltas) == "cut"


def test_delta_fit_of_no_finished_call_is_an_empty_table_with_its_columns() -> None:
    table = scl.calls(load_turns(a=turns.anthropic(["Hi"])))
    fit = stats.delta_fit(table)
    assert fit.empty and list(fit.columns) == list(stats.FIT_COLUMNS)
    assert stats.chapter_comparison(table).empty
    assert stats.describe_comparison(stats.chapter_comparison(table)) == []


def _served(**who: tuple[str | None, str | None]) -> pd.DataFrame:
    return pd.DataFrame({"turn": list(who), "host": [h for h, _ in who.values()],
                         "model": [m for _, m in who.values()], "said_by": "index"})


def test_with_server_adds_each_turns_host_and_model_and_says_where_none_is_said() -> None:
    table = calls_of(['{"a":', ' 1}'], ['{"a":', ' 2}'])
    out = stats.with_server(table, _served(t0=("api.openai.com", "gpt-4o"), t1=(None, None)))
    assert out["host"].tolist() == ["api.openai.com", stats.NOT_SAID]
    assert out["model"].tolist() == ["gpt-4o", stats.NOT_SAID] and len(out) == len(table)


def test_delta_fit_by_host_fits_each_server_a_wire_format_pools_apart() -> None:
    fine = [['{"a":', ' "x', 'yz"}']] * 3  # 3 deltas a call
    coarse = [['{"a": "xyz"', "}"]] * 3  # 2 deltas a call, same length
    table = calls_of(*fine, *coarse)
    served = _served(**{f"t{i}": ("fine.example" if i < 3 else "coarse.example", "m")
                        for i in range(6)})
    fit = stats.delta_fit(stats.with_server(table, served), by=["provider", "host"])
    assert fit.index.names == ["provider", "host"]
    assert fit.loc[("anthropic-messages", "fine.example"), "chars_per_delta"] == pytest.approx(
        12 / 3)
    assert fit.loc[("anthropic-messages", "coarse.example"), "chars_per_delta"] == pytest.approx(
        12 / 2)


def test_a_whole_sender_is_said_to_be_so_only_over_the_lengths_it_sent() -> None:
    table = calls_of(['{"q": "abc"}'], ['{"q": "abcdefghij"}'])
    row = stats.chapter_comparison(table).loc["anthropic-messages"]
    assert (row["shortest"], row["longest"]) == (12, 19)
    (line,) = stats.describe_comparison(stats.chapter_comparison(table))
    assert "(12 to 19 characters)" in line and "up to 19 characters" in line
    assert "any length" not in line


def test_describe_comparison_names_a_group_of_several_keys() -> None:
    table = stats.with_server(calls_of(['{"q": "abc"}']), _served(t0=("h.example", "m1")))
    comparison = stats.chapter_comparison(table, by=["provider", "host", "model"])
    (line,) = stats.describe_comparison(comparison)
    assert line.startswith("anthropic-messages · h.example · m1: sent its one finished call")


def test_delivery_by_model_gives_each_models_verdict() -> None:
    table = calls_of(['{"q": "abc"}'], ['{"q":', ' "abc"}'])
    served = _served(t0=("h", "whole-model"), t1=("h", "streaming-model"))
    verdicts = stats.delivery(stats.with_server(table, served), ["provider", "model"])
    assert verdicts.loc[("anthropic-messages", "whole-model"), "delivery"] == "whole"
    assert verdicts.loc[("anthropic-messages", "streaming-model"), "delivery"] == "streamed"
