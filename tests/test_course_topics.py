"""The exercises of notebooks 1 to 4: their helpers, and that what their worked explanations
say agrees with what their checkers compute."""

from __future__ import annotations

import streamcalls_lab as scl
from streamcalls_lab.course import (
    EXERCISES,
    anatomy,
    breaking,
    check,
    fragments,
    solution,
    stepping,
)

from .support import turns

SPLIT_SPACE = turns.anthropic(["Checking"], [("f", ['{"q": "a', ' b"}'])])


def test_events_are_one_turns_rows_as_plain_dicts_with_none_for_missing() -> None:
    rows = anatomy.events(scl.load(SPLIT_SPACE, name="t"))
    assert [r["kind"] for r in rows if r["kind"] == "args_delta"] == ["args_delta"] * 2
    assert all(r["fragment"] is None for r in rows if r["kind"] == "call_start")


def test_an_assembler_that_strips_is_told_the_space_is_data() -> None:
    verdict = check("01-anatomy/assemble", anatomy._stripping)
    assert not verdict and "space at the edge of a fragment is part of the value" in verdict.why


def test_the_worked_assembler_agrees_with_the_accumulator_on_a_recorded_shape() -> None:
    rows = anatomy.events(scl.load(SPLIT_SPACE, name="t"))
    assert solution("01-anatomy/assemble").answer(rows) == anatomy.expected(rows) == {
        1: '{"q": "a b"}'}


def test_an_on_token_count_that_includes_the_end_is_told_so() -> None:
    verdict = check("02-fragments/on-token", fragments._counting_the_end)
    assert not verdict and "(6, 6)" in verdict.why


def test_the_what_ifs_come_out_as_notebook_3s_explanation_says() -> None:
    """The worked explanation argues each of these; if the model changes, it must too."""
    assert breaking.answers() == {
        "trim_split_after_the_space": True, "trim_split_inside_a_word": False,
        "trim_cut_every_5": True, "decode_each_split_one_right": True,
        "key_by_name_no_earlier_call": False, "one_choice_earlier_sent_before": False,
        "key_by_last_earlier_sent_before": False, "decode_chunks_one_read": False}


def test_a_blank_what_if_form_reveals_no_answer() -> None:
    verdict = check("03-breaking/what-if", dict.fromkeys(breaking.WHAT_IFS))
    assert not verdict and "bites" not in verdict.why


def test_one_wrong_what_if_is_named_with_what_the_handler_did() -> None:
    answer = breaking.answers() | {"trim_split_after_the_space": False}
    verdict = check("03-breaking/what-if", answer)
    assert not verdict and verdict.why.startswith("1 of 8 not yet: trim_split_after_the_space")
    assert "buffer differs" in verdict.why


def test_the_stepper_reveals_read_when_variants_go_wrong_and_recover() -> None:
    stepper = scl.Stepper(SPLIT_SPACE)
    step, first = stepping.first_to_go_wrong(stepper)
    assert step is not None and first
    assert "parse_to_finish" in stepping.wrong_then_right(stepper)
    assert "trim" in stepping.still_wrong(stepper)
    assert stepping.first_divergence_of(stepper, "key_by_name") is None
    assert stepping.first_divergence_of(stepper, "trim")[0] > step - 1


def test_the_cut_off_explanation_names_every_variant_still_wrong_there() -> None:
    explanation = EXERCISES["04-stepping/cut-off"].explanation
    assert all(v in explanation for v in solution("04-stepping/cut-off").answer)


def _prose(stem: str) -> str:
    import nbformat

    from .conftest import REPO

    nb = nbformat.read(REPO / "notebooks" / f"{stem}.ipynb", as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_notebook_1_no_longer_shows_a_non_prefix_as_a_prefix_that_parses() -> None:
    assert 'such as `{"limit": 20}`' not in _prose("01-anatomy-of-a-streamed-turn")


def test_notebooks_3_and_4_ask_for_a_prediction_instead_of_telling_the_outcome() -> None:
    assert "fault disappears" not in _prose("03-breaking-a-stream")
    assert "What to look for" not in _prose("04-step-through-an-accumulator")
