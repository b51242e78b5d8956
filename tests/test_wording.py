"""wording: one number format and a noun that agrees with its count, in every sentence."""

from __future__ import annotations

from streamcalls_lab.wording import count, number


def test_one_of_a_thing_is_singular() -> None:
    assert count(1, "kind") == "1 kind"


def test_none_or_many_are_plural() -> None:
    assert (count(0, "kind"), count(5, "kind")) == ("0 kinds", "5 kinds")


def test_an_irregular_plural_is_given() -> None:
    assert count(2, "family", "families") == "2 families"


def test_numbers_group_thousands_from_ten_thousand_as_tables_do() -> None:
    assert (number(7810), number(12345), number(-12345)) == ("7810", "12,345", "-12,345")
