"""The stream generator: byte-exact arguments, real wire shapes, calibrated fragments, a seed."""

from __future__ import annotations

import json
from collections import Counter

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import calls, load
from streamcalls_lab import timing as sidecar
from streamcalls_lab.generate import (
    GENERATED_FORMATS,
    TimingModel,
    ToolCall,
    calibration,
    compare_with_calibration,
    cut_at,
    generate,
    serialize,
    split_args,
    token_pieces,
)
from streamcalls_lab.providers import FORMATS as WIRE_FORMATS

from .conftest import FORMATS, capture_files

TICKET = {"order_id": "A-4417", "description": 'Zoë said "cracked"\nsee *both* 📷 `KT-2'}


def _arg_fragments(body: bytes) -> list[list[str]]:
    """Each call's non-empty argument fragments as load() reads them, by block."""
    df = load(body)
    rows = df[(df["kind"] == "args_delta") & (df["fragment"].fillna("") != "")]
    return [list(g["fragment"]) for _, g in rows.groupby("block", sort=False)]


def _payloads(body: bytes) -> list[dict]:
    return [orjson.loads(d) for d in load(body, raw=True)["data"] if d != "[DONE]"]


# -- byte-exact, whatever the document -----------------------------------------------------
_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_docs = st.one_of(
    _json.map(lambda v: json.dumps(v, ensure_ascii=False)),
    _json.map(lambda v: json.dumps(v, ensure_ascii=True)),  # \u escapes to split inside
    _json.map(lambda v: json.dumps({"v": v}, indent=2)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FORMATS), st.lists(_docs, min_size=1, max_size=3), st.integers(0, 99))
def test_calls_give_back_every_argument_string_exactly(provider, docs, seed):
    turn = generate([("tool", d) for d in docs], provider=provider, before="Hi 👋\n",
                    after="done", seed=seed)
    table = calls(turn.body)
    assert list(table["args"]) == docs
    assert table["complete"].all()


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FORMATS), _docs, st.integers(0, 99))
def test_strict_load_reads_every_turn_without_error_rows(provider, doc, seed):
    df = load(generate([("tool", doc)], provider=provider, before="é", seed=seed).body)
    assert not (df["kind"] == "error").any()


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FORMATS), st.text(st.characters(exclude_categories=("Cs",)),
                                         min_size=1, max_size=80), st.integers(0, 99))
def test_any_text_goes_through_verbatim_even_when_not_json(provider, args, seed):
    turn = generate([("tool", args)], provider=provider, seed=seed)
    assert list(calls(turn.body)["args"]) == [args]


def test_a_surrogate_cannot_be_sent():
    with pytest.raises(UnicodeEncodeError):
        generate([("tool", '"\ud800"')], provider="openai-chat")


# -- determinism ---------------------------------------------------------------------------
@pytest.mark.parametrize("provider", FORMATS)
def test_one_seed_gives_the_same_bytes_and_reads(provider):
    one = generate([("create_ticket", TICKET)], provider=provider, before="Sure.", seed=7)
    two = generate([("create_ticket", TICKET)], provider=provider, before="Sure.", seed=7)
    assert (one.body, one.reads) == (two.body, two.reads)


@pytest.mark.parametrize("provider", FORMATS)
def test_another_seed_gives_other_bytes(provider):
    one = generate([("create_ticket", TICKET)], provider=provider, seed=7)
    two = generate([("create_ticket", TICKET)], provider=provider, seed=8)
    assert one.body != two.body


# -- the controls --------------------------------------------------------------------------
@pytest.mark.parametrize("provider", FORMATS)
def test_cuts_fix_the_fragment_boundaries(provider):
    args = serialize(TICKET, provider)
    cuts = [1, 2, args.index("\\n") + 1, len(args) - 1]
    turn = generate([ToolCall("create_ticket", args, cuts=cuts)], provider=provider)
    assert _arg_fragments(turn.body) == [cut_at(args, cuts)]


def test_cut_at_refuses_a_cut_outside_the_text():
    with pytest.raises(ValueError, match="strictly between"):
        cut_at("abc", [3])


@pytest.mark.parametrize("provider", FORMATS)
def test_truncate_stops_mid_arguments_after_a_whole_frame(provider):
    turn = generate([("create_ticket", TICKET)], provider=provider, truncate=0.5, seed=3)
    df = load(turn.body)  # strict: an unterminated frame would raise
    row = calls(df).iloc[0]
    assert turn.body.endswith(b"\n\n")
    assert not row["complete"]
    assert 0 < len(row["args"]) <= len(turn.args[0]) // 2
    assert turn.args[0].startswith(row["args"])
    assert not (df["kind"] == "turn_stop").any()
    assert not turn.complete


@pytest.mark.parametrize("provider", FORMATS)
def test_truncate_before_the_first_fragment_keeps_only_the_announcement(provider):
    turn = generate([("create_ticket", TICKET)], provider=provider, truncate=0.001, seed=3)
    row = calls(turn.body).iloc[0]
    assert (row["tool"], row["args"], row["complete"]) == ("create_ticket", "", False)


def test_truncate_needs_a_fraction():
    with pytest.raises(ValueError, match="fraction"):
        generate([("t", "{}")], truncate=1.0)


@pytest.mark.parametrize("provider", FORMATS)
def test_two_calls_to_one_tool_stay_two_calls(provider):
    turn = generate([("lookup_order", {"order_id": "A-1"}), ("lookup_order", {"order_id": "B-2"})],
                    provider=provider, seed=1)
    table = calls(turn.body)
    assert list(table["tool"]) == ["lookup_order", "lookup_order"]
    assert table["block"].nunique() == 2 and table["call_id"].nunique() == 2


@pytest.mark.parametrize("provider", FORMATS)
def test_prose_comes_before_and_after_the_calls(provider):
    turn = generate([("lookup_order", {"order_id": "A-1"})], provider=provider,
                    before="Checking *now*.", after="Found it 👍", seed=2)
    df = load(turn.body)
    first_call = df.loc[df["kind"] == "call_start", "seq"].min()
    last_args = df.loc[df["kind"] == "args_delta", "seq"].max()
    text = df[df["kind"] == "text_delta"]
    assert "".join(text.loc[text["seq"] < first_call, "fragment"]) == "Checking *now*."
    assert "".join(text.loc[text["seq"] > last_args, "fragment"]) == "Found it 👍"


@pytest.mark.parametrize("provider", FORMATS)
def test_a_turn_may_be_prose_only(provider):
    df = load(generate(provider=provider, before="Just text.", seed=0).body)
    assert "".join(df.loc[df["kind"] == "text_delta", "fragment"]) == "Just text."
    assert calls(df).empty


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown provider 'nope'; known: anthropic-messages"):
        generate([("t", "{}")], provider="nope")


@pytest.mark.parametrize("provider", [n for n, f in WIRE_FORMATS.items() if f.write is not None])
def test_every_format_with_a_writer_generates_a_turn_that_loads_back(provider: str) -> None:
    turn = generate([("get_weather", {"city": "Zürich"}), ("get_time", {"tz": "Europe/Rome"})],
                    provider=provider, before="Let me check.", seed=3)
    table = calls(turn.body)
    assert list(table["args"]) == list(turn.args) and table["complete"].all()
    assert list(table["provider"]) == [provider] * 2


# -- each format's wire shapes --------------------------------------------------------------
def test_anthropic_blocks_open_with_an_empty_partial_json():
    turn = generate([("a", {"x": 1}), ("b", {"y": 2})], provider="anthropic-messages", seed=0)
    df = load(turn.body)
    for block in df.loc[df["kind"] == "call_start", "block"]:
        first = df[(df["kind"] == "args_delta") & (df["block"] == block)].iloc[0]
        assert first["fragment"] == ""


def test_anthropic_event_order_matches_the_real_stream():
    turn = generate([("a", {"x": 1})], provider="anthropic-messages", before="Hi.", seed=0,
                    after="Bye.")
    events = [e for e in load(turn.body)["event"] if e != "content_block_delta"]
    assert events == ["message_start", "content_block_start", "ping", "content_block_stop",
                      "content_block_start", "content_block_stop", "content_block_start",
                      "content_block_stop", "message_delta", "message_stop"]


def test_anthropic_ids_look_like_the_real_ones():
    payloads = _payloads(generate([("a", {"x": 1})], provider="anthropic-messages").body)
    starts = [p["content_block"]["id"] for p in payloads if p["type"] == "content_block_start"]
    assert starts[0].startswith("toolu_01") and len(starts[0]) == 30
    assert payloads[0]["message"]["id"].startswith("msg_01")


def test_chat_announces_a_call_with_id_name_and_empty_arguments():
    payloads = _payloads(generate([("lookup_order", {"a": 1})], provider="openai-chat").body)
    announced = [tc for p in payloads for c in p["choices"]
                 for tc in c["delta"].get("tool_calls", []) if "id" in tc]
    assert announced == [{"index": 0, "id": announced[0]["id"], "type": "function",
                          "function": {"name": "lookup_order", "arguments": ""}}]
    assert announced[0]["id"].startswith("call_")


def test_chat_ends_with_finish_reason_a_usage_chunk_and_done():
    turn = generate([("t", {"a": 1})], provider="openai-chat", seed=0)
    payloads = _payloads(turn.body)
    assert payloads[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert payloads[-1]["choices"] == [] and payloads[-1]["usage"]["total_tokens"] > 0
    assert turn.body.endswith(b"data: [DONE]\n\n")
    assert all("obfuscation" in p for p in payloads)


def test_chat_single_call_flushes_one_token_per_frame():
    args = serialize(TICKET, "openai-chat")
    turn = generate([("create_ticket", args)], provider="openai-chat")
    assert _arg_fragments(turn.body) == [token_pieces(args)]


def test_chat_parallel_calls_are_recut_into_pieces_of_six_or_fewer():
    turn = generate([("a", TICKET), ("b", TICKET)], provider="openai-chat", seed=4)
    lengths = [len(f) for frags in _arg_fragments(turn.body) for f in frags]
    assert max(lengths) <= 6 and len(set(lengths)) > 1


def test_token_pieces_never_split_a_character():
    text = "👍🏽 café 漢字 \U0001f9d1\u200d\U0001f373"
    pieces = token_pieces(text)
    assert "".join(pieces) == text and all(p.encode("utf-8") for p in pieces)


def test_responses_done_and_item_repeat_the_whole_arguments():
    table = calls(generate([("t", TICKET)], provider="openai-responses", seed=0).body)
    assert table["final_matches"].all()


def test_responses_sequence_numbers_count_every_event():
    payloads = _payloads(generate([("t", TICKET)], provider="openai-responses",
                                  before="Hi", seed=0).body)
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))


def test_responses_obfuscation_tops_each_delta_up_to_sixteen():
    payloads = _payloads(generate([("t", TICKET)], provider="openai-responses").body)
    deltas = [p for p in payloads if p["type"].endswith(".delta")]
    assert deltas and all((len(p["delta"]) + len(p["obfuscation"])) % 16 == 0 for p in deltas)


def test_responses_first_fragment_is_brace_quote_or_brace():
    firsts = Counter(
        _arg_fragments(generate([("t", {"a": 1})], provider="openai-responses", seed=s).body)[0][0]
        for s in range(40))
    assert set(firsts) == {"{", '{"'}


@pytest.mark.captures
@pytest.mark.parametrize("provider", FORMATS)
def test_every_generated_frame_has_a_shape_seen_in_real_captures(captures, provider):
    """Top-level keys, in order, per event type: each generated shape occurs in a capture."""

    def shapes(body: bytes) -> set[tuple]:
        out = set()
        for p in _payloads(body):
            out.add((p.get("type") or p.get("object"), tuple(p)))
        return out

    real: set[tuple] = set()
    for path in capture_files(provider):
        try:
            real |= shapes(path.read_bytes())
        except (ValueError, KeyError):
            continue
    turn = generate([("a", TICKET), ("b", {"x": 1})], provider=provider, before="Hi.",
                    after="Bye.", seed=0)
    assert shapes(turn.body) - real == set()


# -- serialisation -------------------------------------------------------------------------
def test_serialize_writes_each_providers_style():
    value = {"a": "é", "b": [1, 2]}
    assert serialize(value, "anthropic-messages") == '{"a": "é", "b": [1, 2]}'
    assert serialize(value, "openai-responses") == '{"a":"é","b":[1,2]}'
    assert serialize(value, "openai-chat", parallel=True) == '{"a": "é", "b": [1, 2]}'
    assert serialize('{"x" :1}', "openai-chat") == '{"x" :1}'


# -- timing --------------------------------------------------------------------------------
def test_the_sidecar_reproduces_the_reads(tmp_path):
    turn = generate([("t", TICKET)], provider="openai-chat", before="Hi", seed=0)
    path = turn.write(tmp_path / "turn.sse")
    reads = sidecar.read(path)
    assert path.read_bytes() == turn.body
    assert reads == list(turn.reads) and sum(n for _, n in reads) == len(turn.body)


def test_loaded_times_start_at_zero_and_never_run_back(tmp_path):
    path = generate([("t", TICKET)], provider="anthropic-messages", seed=0).write(
        tmp_path / "turn.sse")
    t = load(path)["t"]
    assert t.iloc[0] == 0 and t.is_monotonic_increasing and t.iloc[-1] > 0


def test_the_first_token_waits_for_ttft():
    slow = generate([("t", TICKET)], provider="openai-chat", seed=0,
                    timing=TimingModel(ttft=5.0, jitter=0.0))
    assert slow.reads[1][0] == pytest.approx(5.0)


def test_frames_sent_together_share_one_read():
    turn = generate([("t", TICKET)], provider="openai-responses", seed=0,
                    timing=TimingModel(jitter=0.0))
    first = turn.chunks()[0][1]
    assert first.count(b"\n\n") == 2  # response.created + response.in_progress


# -- calibrated ------------------------------------------------------------------------------
def test_generated_fragment_medians_are_within_one_char_of_the_measured():
    table = compare_with_calibration(seed=0)
    off = table[(table["median"] - table["measured_median"]).abs() > 1]
    assert off.empty, off.to_string()


def test_argument_pieces_never_exceed_the_measured_maximum_where_it_is_a_hard_cap():
    table = compare_with_calibration(seed=0).set_index(["provider", "regime"])
    assert table.loc[("openai-chat", "parallel"), "max"] <= 6
    assert table.loc[("anthropic-messages", "parallel"), "max"] <= 12


def test_every_measured_flush_has_its_figures_in_the_calibration():
    """A format that declares how its servers cut (``Flush``) has the measurements the
    generator draws from, under its own name: declaring one without them fails here."""
    measured = {n: f.flush for n, f in WIRE_FORMATS.items() if f.flush is not None}
    assert set(measured) == set(GENERATED_FORMATS)
    for name, flush in measured.items():
        figures = calibration()["formats"][name]
        for parallel in (False, True):
            if flush.cuts_args(parallel) == "measured":
                subset = "parallel" if parallel else "single"
                hist = figures["subsets"][f"first_party_{subset}_call_turns"]["args"]
                assert sum(hist["fragment_chars"]["hist"]) > 0, (name, subset)
        if flush.text == "measured":
            assert sum(figures["text"]["fragment_chars"]["hist"]) > 0, name
        if flush.brace_split:
            assert figures["args"]["first_fragment"]["calls_with_fragments"] > 0, name


def test_the_cuts_follow_the_formats_declaration(monkeypatch: pytest.MonkeyPatch):
    """What the generator does with a format is what the format declares, whatever it is
    called: Chat's parallel calls in measured pieces (spaced JSON), under another name too;
    the same format declaring no ``Flush``, o200k tokens (compact JSON), as any format not
    measured."""
    import dataclasses
    import random

    chat = WIRE_FORMATS["openai-chat"]
    monkeypatch.setitem(WIRE_FORMATS, "chat-clone", dataclasses.replace(chat, name="chat-clone"))
    monkeypatch.setitem(calibration()["formats"], "chat-clone",
                        calibration()["formats"]["openai-chat"])
    monkeypatch.setitem(WIRE_FORMATS, "chat-unmeasured",
                        dataclasses.replace(chat, name="chat-unmeasured", flush=None))
    args = serialize(TICKET, "chat-clone", parallel=True)
    assert args == serialize(TICKET, "openai-chat", parallel=True)
    assert args.startswith('{"order_id": ')
    for name in ("openai-chat", "chat-clone"):
        measured = split_args(args, name, random.Random(0), parallel=True)
        assert max(map(len, measured)) <= 6 and "".join(measured) == args
    assert serialize(TICKET, "chat-unmeasured", parallel=True).startswith('{"order_id":"')
    assert split_args(args, "chat-unmeasured", random.Random(0), parallel=True) == (
        token_pieces(args))


def test_split_args_is_deterministic_for_a_seeded_rng():
    import random

    args = serialize(TICKET, "anthropic-messages")
    one = split_args(args, "anthropic-messages", random.Random(1))
    assert one == split_args(args, "anthropic-messages", random.Random(1))
    assert "".join(one) == args


# -- the command line ----------------------------------------------------------------------
def test_the_generate_subcommand_writes_what_generate_returns(tmp_path):
    from streamcalls_lab.cli import main

    out = tmp_path / "x.sse"
    assert main(["generate", "--out", str(out), "--format", "openai-chat", "--seed", "3",
                 "--call", 'lookup_order={"order_id":"A-1"}', "--before", "Hi"]) == 0
    turn = generate([("lookup_order", '{"order_id":"A-1"}')], provider="openai-chat",
                    before="Hi", seed=3)
    assert out.read_bytes() == turn.body and sidecar.read(out) == list(turn.reads)
