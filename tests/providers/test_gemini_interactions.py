"""Gemini Interactions API streams normalised to the contract's kinds, one behaviour per test."""

from __future__ import annotations

import json

import pytest

import streamcalls_lab as scl
from streamcalls_lab.providers import READERS

from ..conftest import CAPTURES
from ..support.sse_turns import assert_refused_naming, kinds, providers, sse

CREATED = {"interaction": {"id": "v1_x", "status": "in_progress", "object": "interaction"},
           "event_type": "interaction.created"}
CALL = {"index": 1, "step": {"id": "c1", "signature": "", "type": "function_call",
                             "name": "get_weather", "arguments": {}},
        "event_type": "step.start"}
DONE = {"interaction": {"id": "v1_x", "status": "requires_action"},
        "event_type": "interaction.completed"}


def args(fragment: str, index: int = 1) -> dict:
    return {"index": index, "delta": {"arguments": fragment, "type": "arguments_delta"},
            "event_type": "step.delta"}


def stop(index: int = 1) -> dict:
    return {"index": index, "event_type": "step.stop"}


def interactions(*events: dict) -> bytes:
    """The SSE body the API sends: each event named on its ``event:`` line too."""
    return sse(*((e["event_type"], e) for e in events))


FRAGMENTS = ['{"city": ', '"K\u00f8benhavn"}']
TURN = interactions(CREATED, CALL, *map(args, FRAGMENTS), stop(), DONE)


def test_gemini_interactions_is_registered_and_detected_from_its_first_event() -> None:
    assert "gemini-interactions" in READERS
    assert providers(TURN) == {"gemini-interactions"}


def test_a_log_of_the_parsed_events_one_per_line_reads_the_same() -> None:
    log = "".join(json.dumps(e) + "\n" for e in (CREATED, CALL, args("{}"), stop(), DONE))
    assert kinds(log.encode()) == kinds(interactions(CREATED, CALL, args("{}"), stop(), DONE))


def test_a_function_call_is_announced_filled_and_stopped_by_its_step_index() -> None:
    assert kinds(TURN) == ["other", "call_start", "args_delta", "args_delta", "block_stop",
                           "turn_stop"]
    (call,) = scl.calls(TURN).itertuples()
    assert (call.block, call.call_id, call.tool) == (1, "c1", "get_weather")
    assert call.args == '{"city": "K\u00f8benhavn"}' and call.complete


def test_argument_fragments_keep_their_escaped_wire_length() -> None:
    df = scl.load(TURN)
    frags = df[df.kind == "args_delta"]
    assert list(frags.wire_chars) == [len(json.dumps(f)) - 2 for f in FRAGMENTS]  # \u00f8: 6


def test_arguments_sent_whole_in_the_start_are_one_exact_fragment() -> None:
    whole = {**CALL, "step": {**CALL["step"], "arguments": {"city": "Oslo", "days": [1, 2]}}}
    body = sse(("step.start", '{"index": 1, "step": {"type": "function_call", "id": "c2", '
                              '"name": "f", "arguments": {"city" : "Oslo", "days": [1,2]}}, '
                              '"event_type": "step.start"}'), (None, stop()), (None, DONE))
    assert whole["step"]["arguments"] == json.loads(scl.calls(body).args.iloc[0])
    assert scl.calls(body).args.iloc[0] == '{"city" : "Oslo", "days": [1,2]}'


def test_text_steps_are_text_and_thoughts_and_server_tools_are_other() -> None:
    body = interactions(
        CREATED,
        {"index": 0, "step": {"type": "thought"}, "event_type": "step.start"},
        {"index": 0, "delta": {"signature": "abc", "type": "thought_signature"},
         "event_type": "step.delta"},
        stop(0),
        {"index": 1, "step": {"type": "google_search_call", "id": "s1"},
         "event_type": "step.start"},
        {"index": 1, "delta": {"type": "google_search_call", "arguments": {"queries": ["q"]}},
         "event_type": "step.delta"},
        stop(1),
        {"index": 2, "step": {"type": "model_output"}, "event_type": "step.start"},
        {"index": 2, "delta": {"text": "Hi", "type": "text"}, "event_type": "step.delta"},
        stop(2), {**DONE, "interaction": {"status": "completed"}})
    assert kinds(body) == ["other", "other", "other", "block_stop", "other", "other",
                           "block_stop", "text_start", "text_delta", "block_stop", "turn_stop"]
    assert len(scl.calls(body)) == 0


def test_an_error_event_is_a_provider_error_row() -> None:
    body = interactions(CREATED) + sse(("error", {"event_type": "error",
                                                  "error": {"message": "quota exceeded"}}))
    last = scl.load(body).iloc[-1]
    assert last.kind == "error" and last.problem == "provider error: quota exceeded"


@pytest.mark.parametrize(("event", "reason"), [
    ({"index": "1", "delta": {"arguments": "{}", "type": "arguments_delta"},
      "event_type": "step.delta"}, "index"),
    ({"index": 1, "delta": {"arguments": 5, "type": "arguments_delta"},
      "event_type": "step.delta"}, "delta.arguments"),
    ({"index": 1, "step": {"type": "function_call", "name": None},
      "event_type": "step.start"}, "step.name"),
], ids=["index", "arguments", "name"])
def test_a_field_of_the_wrong_type_is_refused_naming_it(event: dict, reason: str) -> None:
    assert_refused_naming(interactions(CREATED, event), reason)


REAL = sorted(p for p in (CAPTURES / "gemini").glob("vercel__ai__*.jsonl")
              if b'"event_type"' in p.read_bytes()[:4096])


@pytest.mark.captures
@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_every_real_interactions_log_reads_without_a_problem(captures, path) -> None:
    df = scl.load(path)
    assert set(df.provider) == {"gemini-interactions"} and df.problem.isna().all()
    deltas = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    sent = "".join(e["delta"]["arguments"] for e in deltas
                   if e.get("event_type") == "step.delta"
                   and e["delta"].get("type") == "arguments_delta")
    assert "".join(scl.calls(df).args) == sent
