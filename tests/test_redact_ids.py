"""Redaction's stand-ins are one to one (issue #34): ids a local server or gateway numbers
(``call_0`` ... ``call_5``) stay as many distinct ids in every registered format, so a
redacted copy loads to the same calls."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.redact import Redactor
from streamcalls_lab.turns import Call, Script, body, write

SIX = 6


def _numbered(name: str) -> bytes:
    prefix = FORMATS[name].call_ids[0]
    turn = Script(tuple(Call(f"tool_{n}", f"{prefix}{n}", ('{"n": ', f'{n}}}'))
                        for n in range(SIX)))
    return body(name, write(name, turn))


def _calls(raw: bytes) -> tuple[int, int]:
    table = scl.calls(scl.load(raw, strict=False))
    return len(table), table.call_id.nunique(dropna=False)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_redacted_copy_loads_to_the_same_distinct_calls(name: str) -> None:
    raw = _numbered(name)
    for salt in ("a", "b", "c", "d"):  # the merge showed with most salts
        redacted = Redactor(salt).capture(raw, ndjson=FORMATS[name].framing == "ndjson")
        assert _calls(redacted) == _calls(raw)


def test_ids_map_one_to_one_even_when_their_space_is_full() -> None:
    r = Redactor("full")
    ids = [f"call_{n}" for n in range(10)]
    standins = [r.id(i) for i in ids]
    assert sorted(standins) == ids  # ten one-digit ids: the ten one-digit stand-ins
    assert [r.id(i) for i in ids] == standins  # and the same again for each
    many = [r.id(f"run_{n:02d}x") for n in range(100)]
    assert len(set(many)) == 100
