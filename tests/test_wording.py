"""wording: one number format, a noun that agrees with its count, and the clauses that hold,
in every sentence."""

from __future__ import annotations

from streamcalls_lab.wording import clauses, count, number


def test_one_of_a_thing_is_singular() -> None:
    assert count(1, "kind") == "1 kind"


def test_none_or_many_are_plural() -> None:
    assert (count(0, "kind"), count(5, "kind")) == ("0 kinds", "5 kinds")


def test_an_irregular_plural_is_given() -> None:
    assert count(2, "family", "families") == "2 families"


def test_numbers_group_thousands_from_ten_thousand_as_tables_do() -> None:
    assert (number(7810), number(12345), number(-12345)) == ("7810", "12,345", "-12,345")


def test_only_the_clauses_that_hold_are_said_in_order() -> None:
    assert clauses((["x"], "you left out x"), ([], "nothing extra"), ("boom", "boom"),
                   (None, "no error")) == "you left out x; boom"
    assert clauses((0, "none")) == ""


def test_a_symptom_says_each_kind_of_difference_once_in_its_detail() -> None:
    from streamcalls_lab.faults.symptom import CALLS, Symptom, describe

    a, b, c = ("a", "f", "{}"), ("b", "g", "[]"), ("c", "h", "1")
    s = Symptom(CALLS, (), (a, b, c), (("a", "f", "{"), c, ("z", "f", "{}")),
                error="raised KeyError: 'x'")
    assert describe(s)[2] == ("1 call handed on with other arguments or tool; 1 call handed "
                              "on that a correct handler holds back or never sees; 1 call "
                              "never handed on; raised KeyError: 'x'")
