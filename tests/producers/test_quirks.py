"""Every producer quirk, written in every format that can carry it: found, and read right.

Driven by the registries alone (``producers.QUIRKS`` and each ``FORMAT.quirks``), so a quirk or
a format added the documented way is covered here with no other edit.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

import streamcalls_lab as scl
from streamcalls_lab import FAULTS, turns
from streamcalls_lab.loader import load_captures
from streamcalls_lab.producers import QUIRKS, anomalies
from streamcalls_lab.producers.scan import evidence
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.sources import resolve
from streamcalls_lab.turns import Call, Script, Text

from ..conftest import REPO

SEGMENTS = (
    Text(("Let me ", "check é.")),
    Call("get_weather", "call_1", ('{"city": "Zü', 'rich", "note": "say \\"hi\\""}')),
    Call("get_time", "call_2", ('{"tz": ', '"Europe/Rome"}')),
)
CASES = [(fmt, name) for fmt, spec in FORMATS.items() if spec.write is not None
         for name in spec.quirks]


STRICT_ERRORS = {"identity_changed"}
"""Quirks that are also a problem in the bytes: strict mode raises, lenient reads on."""


def _load(body: bytes, quirk: str, **options: object) -> pd.DataFrame:
    return scl.load(body, strict=quirk not in STRICT_ERRORS, **options)  # type: ignore[arg-type]


def _written(fmt: str, name: str) -> tuple[bytes, list[dict], Script]:
    turn = Script(SEGMENTS, quirks=frozenset({name}))
    frames = turns.write(fmt, turn)
    return turns.body(fmt, frames), turns.expected_calls(frames, turn), turn


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_a_quirk_written_in_a_format_is_found_there_and_nothing_else(fmt: str, name: str) -> None:
    body, _, _ = _written(fmt, name)
    found = anomalies(_load(body, name, name=name))
    assert name in set(found["anomaly"])
    assert set(found["anomaly"]) <= {name, *QUIRKS[name].implies}
    assert (found["offset"] >= 0).all() and (found["offset"] < len(body)).all()


@pytest.mark.parametrize(("fmt", "name"), [c for c in CASES if not QUIRKS[c[1]].destroys])
def test_a_quirk_that_destroys_nothing_is_read_as_a_careful_client_reads_it(
        fmt: str, name: str) -> None:
    body, expected, _ = _written(fmt, name)
    table = scl.calls(_load(body, name))  # (a strict error is read on leniently: its test)
    got = [(c.call_id, c.tool, c.args, c.complete) for c in table.itertuples()]
    assert got == [(c["call_id"], c["tool"], c["args"], True) for c in expected]


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_a_quirk_is_a_finding_not_an_error_and_the_fast_path_agrees(fmt: str, name: str) -> None:
    body, _, _ = _written(fmt, name)
    if name in STRICT_ERRORS:  # a problem row, and strict mode names it
        assert (scl.load(body, strict=False)["kind"] == "error").sum() == 1
        with pytest.raises(scl.CaptureError, match=name):
            scl.load(body)
        return
    strict = scl.load(body)  # raises on anything it cannot read
    assert not (strict["kind"] == "error").any()
    fast, reference = (load_captures(resolve(body), bulk=b) for b in (True, False))
    assert fast.equals(reference)


def test_every_format_with_a_writer_writes_a_clean_turn_with_no_anomaly() -> None:
    for fmt, spec in FORMATS.items():
        if spec.write is not None:
            body = turns.turn_bytes(fmt, Script(SEGMENTS))
            assert anomalies(scl.load(body)).empty, fmt


def test_every_quirk_is_cited_explained_writable_and_documented() -> None:
    contract = (REPO / "docs" / "contract.md").read_text("utf-8")
    carried = {name for spec in FORMATS.values() for name in spec.quirks}
    for q in QUIRKS.values():
        assert q.summary and q.reading and q.threads, q.name
        assert all("#" in t for t in q.threads), q.name
        assert q.name in carried, f"no format can carry {q.name}"
        assert set(q.worsens) <= set(FAULTS), q.name
        assert set(q.implies) <= set(QUIRKS), q.name
        assert f"`{q.name}`" in contract, f"docs/contract.md does not name {q.name}"
    for spec in FORMATS.values():
        assert set(spec.quirks) <= set(QUIRKS), spec.name


def test_a_content_quirk_can_occur_wherever_its_content_can_be_written() -> None:
    for q in QUIRKS.values():
        if q.content:
            writable = [f for f in FORMATS.values() if f.write is not None]
            missing = [f.name for f in writable if q.name not in f.quirks and not (
                f.calls_whole and q.name == "invalid_arguments")
                and not (f.name == "ollama" and q.name == "empty_arguments")
                # the AI SDK 4 streams an error part, never the call, for invalid arguments
                and not (f.name == "ai-sdk-data" and q.name == "invalid_arguments")]
            assert missing == [], q.name


def test_a_format_refuses_a_quirk_it_cannot_carry_and_an_unknown_one() -> None:
    with pytest.raises(ValueError, match="gemini cannot carry snapshot_deltas"):
        turns.write("gemini", Script(SEGMENTS, quirks=frozenset({"snapshot_deltas"})))
    with pytest.raises(ValueError, match="unknown quirk 'nope'"):
        turns.write("openai-chat", Script(SEGMENTS, quirks=frozenset({"nope"})))


def test_the_generator_writes_a_seeded_example_of_each_quirk() -> None:
    from streamcalls_lab.generate import generate

    for name in FORMATS["openai-chat"].quirks:
        one = generate([("get_weather", {"city": "Zürich"}), ("get_time", {"tz": "Rome"})],
                       provider="openai-chat", before="Let me check.", seed=4, quirks=[name])
        again = generate([("get_weather", {"city": "Zürich"}), ("get_time", {"tz": "Rome"})],
                         provider="openai-chat", before="Let me check.", seed=4, quirks=[name])
        assert one.body == again.body
        assert name in set(anomalies(scl.load(one.body))["anomaly"]), name


# -- precedence: declared in the specs (``masks``), settled in one step -----------------------
def _named(fmt: str, quirks: frozenset[str]) -> set[str] | None:
    """The anomalies found in a turn written in ``fmt`` with ``quirks`` (None: the format
    cannot write them together)."""
    try:
        body = turns.turn_bytes(fmt, Script(SEGMENTS, quirks=quirks))
    except ValueError:
        return None
    # leniently: what is named is the question here (a pair may write a changed identity,
    # which strict mode refuses by design: tests/providers/test_identity.py holds that)
    return set(anomalies(scl.load(body, strict=False))["anomaly"])


def _owed(quirks: frozenset[str]) -> set[str]:
    """What a turn written with ``quirks`` must be named: each and what it implies, less what
    another of them masks, and nothing else."""
    sent = {*quirks, *(i for q in quirks for i in QUIRKS[q].implies)}
    return sent - {m for q in sent for m in QUIRKS[q].masks}


def _fragmented(fmt: str, name: str) -> bool:
    """A turn written in ``fmt`` with ``name`` alone has calls, each still in two or more
    argument fragments (a quirk that sends calls whole, or as text, leaves nothing for a
    quirk about fragments to show on)."""
    body = turns.turn_bytes(fmt, Script(SEGMENTS, quirks=frozenset({name})))
    found = evidence(scl.load(body, strict=False))  # identity_changed raises strict
    return any(t.calls for t in found) and all(len(c.fragments) >= 2 for t in found
                                                 for c in t.calls)


def _pairs() -> list[tuple[str, str, str]]:
    """Every two quirks one format can write together, each pair in the first such format
    (the finders read evidence, not formats): quirks that leave every call in fragments
    (:func:`_fragmented`) and rewrite no content (``prepare`` can undo another's), less
    those a spec declares in ``conflicts``."""
    out: dict[tuple[str, str], str] = {}
    for fmt, spec in FORMATS.items():
        if spec.write is None:
            continue
        kept = [q for q in sorted(spec.quirks)
                if QUIRKS[q].prepare is None and _fragmented(fmt, q)]
        for a, b in itertools.combinations(kept, 2):
            if b not in QUIRKS[a].conflicts and a not in QUIRKS[b].conflicts:
                out.setdefault((a, b), fmt)
    return [(fmt, a, b) for (a, b), fmt in out.items()]


def test_two_quirks_written_together_are_both_named_unless_one_is_declared_to_mask_the_other(
        ) -> None:
    """A finder that left something out for another quirk's sake (an over-broad exclusion)
    stops a quirk from being named in a turn that has both: every pair is written here."""
    wrong, tried = {}, 0
    for fmt, a, b in _pairs():
        pair = frozenset({a, b})
        named = _named(fmt, pair)
        tried += named is not None
        if named is not None and named != _owed(pair):
            wrong[f"{a}+{b} in {fmt}"] = sorted(named ^ _owed(pair))
    assert not wrong, wrong
    assert tried >= 20


def test_a_masked_finding_is_left_out_and_only_where_its_spec_says() -> None:
    masking = [(q.name, m) for q in QUIRKS.values() for m in q.masks]
    assert masking, "no quirk declares a mask: this test would prove nothing"
    for name, masked in masking:
        assert masked in QUIRKS and masked != name
        for fmt, spec in FORMATS.items():
            if spec.write is None or name not in spec.quirks:
                continue
            named = _named(fmt, frozenset({name}))
            assert named is not None and name in named and masked not in named, (fmt, named)


def test_snapshots_are_not_named_invalid_arguments_but_invalid_json_beside_them_is() -> None:
    """The one mask is per call: a snapshot call masks nothing about another call."""
    from streamcalls_lab.producers.quirks import unmasked

    snap = ("t", "openai-chat", 0, "call_1", "snapshot_deltas", 10, "")
    same = ("t", "openai-chat", 0, "call_1", "invalid_arguments", 10, "")
    other = ("t", "openai-chat", 0, "call_2", "invalid_arguments", 40, "")
    assert unmasked([snap, same, other]) == [snap, other]
    assert unmasked([same, other]) == [same, other]
