"""The breaker runs the byte layer once and replays it to every handler: the same outcomes.

``reference`` is the breaker as it was before (every handler fed every socket read through
its own decoder, every diff through difflib), kept here to compare against: any setup, in
any order (a refresh reuses the last one's tape up to where the bytes differ).
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import breaker
from streamcalls_lab.accumulate import Accumulator
from streamcalls_lab.breaker import PRESETS, CallDiff, Outcome, Setup, Span, run
from streamcalls_lab.faults import CORRECT, FAULTS, MarkdownBubble
from streamcalls_lab.stepper import VariantState, diverge

from .conftest import FORMATS


def _diff(sent: str, got: str) -> tuple[Span, ...]:
    m = difflib.SequenceMatcher(None, sent, got, autojunk=False)
    return tuple(Span(op, sent[a0:a1], got[b0:b1]) for op, a0, a1, b0, b1 in m.get_opcodes())


def _outcome(name: str, cls: type[Accumulator], reads: tuple[bytes, ...]) -> tuple[Outcome, Any]:
    handler = cls()
    calls: list[dict[str, Any]] = []
    error = None
    try:
        for chunk in reads:
            handler.feed_bytes(chunk)
        calls = handler.finish()
    except Exception as e:
        error = f"raised {type(e).__name__}: {e}"
    kept = tuple({k: c.get(k) for k in ("block", "choice", "call_id", "tool", "args")}
                 for c in calls)
    shown = breaker.bubble(handler.message) if isinstance(handler, MarkdownBubble) else None
    return Outcome(name, kept, handler.message, error, bubble=shown), handler.snapshot()


def _call_diffs(correct: tuple[Mapping[str, Any], ...],
                got: tuple[Mapping[str, Any], ...]) -> tuple[CallDiff, ...]:
    # each block's calls paired in order: a second call for one block is an extra diff
    keys = list(dict.fromkeys((c.get("choice"), c["block"]) for c in (*correct, *got)))
    out = []
    for key in keys:
        ws = [c for c in correct if (c.get("choice"), c["block"]) == key]
        hs = [c for c in got if (c.get("choice"), c["block"]) == key]
        for w, h in itertools.zip_longest(ws, hs):
            sent = None if w is None else str(w["args"])
            args = None if h is None else str(h["args"])
            out.append(CallDiff(breaker.CallKey(*key), (w or h or {}).get("tool"), sent, args,
                                _diff(sent or "", args or ""),
                                got_tool=h and h.get("tool"), sent_id=w and w.get("call_id"),
                                got_id=h and h.get("call_id")))
    return tuple(out)


def reference(setup: Setup) -> tuple[Outcome, dict[str, Outcome]]:
    reads = breaker.split_reads(breaker.turn_body(setup), setup.read_size)
    correct, want = _outcome(CORRECT, Accumulator, reads)
    out = {}
    for name, cls in FAULTS.items():
        got, snap = _outcome(name, cls, reads)
        out[name] = replace(got, reason=diverge(want, VariantState(snap, got.error)),
                            diffs=_call_diffs(correct.calls, got.calls),
                            message_diff=_diff(correct.message, got.message))
    return correct, out


def assert_same(setup: Setup) -> None:
    result = run(setup)
    correct, faults = reference(setup)
    assert result.correct == correct
    assert list(result.faults) == list(faults)
    for name, out in faults.items():
        assert result.faults[name] == out, name


@pytest.mark.parametrize("provider", FORMATS)
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_comes_out_as_each_handler_fed_alone_made_it(
        name: str, provider: str) -> None:
    setup = PRESETS[name]
    if provider not in setup.formats():
        return
    assert_same(replace(setup, provider=provider))


@pytest.mark.parametrize("name", ["decode_chunks", "splitlines", "markdown_bubble", "trim"])
@pytest.mark.parametrize("read_size", [1, 2, 3, 5])
def test_small_reads_come_out_the_same_for_the_faults_that_read_bytes(
        name: str, read_size: int) -> None:
    assert_same(replace(PRESETS[name], read_size=read_size, every=1))


@pytest.mark.parametrize("provider", FORMATS)
def test_a_read_that_holds_back_part_of_a_character_comes_out_the_same(provider: str) -> None:
    """``splitlines`` decodes its reads incrementally, so it passes on a split character
    with the next read: that read is the handler's own until the bytes agree again."""
    for read_size in range(2, 9):
        assert_same(Setup('{"k": "éé👍é é"}', every=1, read_size=read_size,
                          provider=provider))


def test_a_refresh_after_an_edit_comes_out_as_a_fresh_run() -> None:
    text = '{"note": "naïve café 👍 line\u2028two", "n": 20}' * 12
    first = Setup(text, split=30, every=1, read_size=1)
    run(first)  # its tape is the one the next refresh starts from
    edited = replace(first, args=text[:300] + "é" + text[301:])
    assert_same(edited)
    assert_same(replace(edited, split=31))
    assert_same(replace(edited, read_size=2))


TEXT = st.lists(st.sampled_from([*list('{}":, ab1\\n*`é👍\u2028'), "\\u00e9"]),
                max_size=16).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=TEXT, split=st.integers(0, 24), every=st.integers(0, 4),
       read_size=st.one_of(st.none(), st.integers(1, 9)), provider=st.sampled_from(FORMATS),
       cut_off=st.booleans(), earlier=st.one_of(st.none(), st.just('{"a": 1}')))
def test_any_setup_comes_out_as_each_handler_fed_alone_made_it(
        args: str, split: int, every: int, read_size: int | None, provider: str,
        cut_off: bool, earlier: str | None) -> None:
    setup = Setup(args, split=min(split, len(args)), every=every, read_size=read_size,
                  provider=provider, cut_off=cut_off, earlier=earlier)
    assert_same(setup)


def test_a_handler_with_its_own_byte_entry_is_fed_every_read_itself() -> None:
    seen: list[bytes] = []

    class Counting(Accumulator):
        def feed_bytes(self, chunk: bytes) -> None:
            seen.append(chunk)
            super().feed_bytes(chunk)

    setup = replace(PRESETS["trim"], read_size=4)
    result = run(setup, {"counting": Counting})
    assert b"".join(seen) == result.body and len(seen) == len(result.reads)
    assert not result.faults["counting"].broken
