"""Deep JSON is valid JSON: arguments nested 5,000 and 200,000 deep are answered
``valid_json``, loaded as rows, compared and judged, without recursion, on every surface that
parses arguments or what a client printed (and orjson's depth limit is no verdict)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcalls_lab as scl
from streamcalls_lab import _deepjson as deepjson
from streamcalls_lab.accumulate import Accumulator
from streamcalls_lab.faults import json_value, parses
from streamcalls_lab.prefixes import strict_parses, top_type
from streamcalls_lab.stats import escape_overhead
from streamcalls_lab.torture import Run, cases, verdict

from .support import turns
from .support.gemini_turns import call, chunk, gemini
from .support.wire_samples import ndjson, ollama_line

DEPTHS = [5_000, 200_000]


def nested(n: int, inner: str = "[1]") -> str:
    return '{"a":' * n + inner + "}" * n


def _ollama(args: str) -> str:
    return ('{"model":"m","created_at":"t","message":{"role":"assistant","content":"",'
            '"tool_calls":[{"function":{"name":"f","arguments":' + args + '}}]},"done":false}')


def _gemini(args: str) -> bytes:
    return gemini(json.dumps(chunk(call("f", {"x": 1}), finish="STOP")).replace(
        '{"x": 1}', args))


def _bodies(args: str) -> dict[str, bytes]:
    half = len(args) // 2
    return {
        "anthropic": turns.anthropic(calls=[("t", [args[:half], args[half:]])]),
        "openai-chat": turns.chat([(0, "c1", "f", [args])]),
        "ollama (inline object)": ndjson(_ollama(args), ollama_line(done=True)),
        "gemini (inline object)": _gemini(args),
    }


# -- the reader ------------------------------------------------------------------------------
json_texts = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids,
                                                             max_size=3),
    max_leaves=12).map(json.dumps)
near_json = json_texts.flatmap(lambda t: st.integers(0, len(t)).map(lambda k: t[:k]))


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(json_texts, near_json,
                      st.text(alphabet='[]{}",:0-1eE. tnaNIfy\\', max_size=12)))
def test_the_reader_accepts_and_reads_what_json_loads_does(text: str) -> None:
    try:
        want = json.loads(text)
    except ValueError:
        assert not deepjson.is_json(text) and not deepjson._deep_is_json(text)
        with pytest.raises(ValueError):
            deepjson._parse(text, build=True)
        return
    assert deepjson.is_json(text) and deepjson._deep_is_json(text)  # (the deep path too)
    got = deepjson._parse(text, build=True)  # the deep path, on shallow text too
    assert deepjson.dumps(got) == json.dumps(want, ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("n", DEPTHS)
def test_deep_text_is_json_and_one_bracket_less_is_not(n: int) -> None:
    assert deepjson.is_json(nested(n)) and not deepjson.is_json(nested(n)[:-1])


@pytest.mark.parametrize("n", [5_000])
def test_deep_values_compare_by_value_at_any_depth(n: int) -> None:
    a, b = deepjson.loads(nested(n)), deepjson.loads(nested(n).replace(":", ": "))
    assert a == b and a != deepjson.loads(nested(n, "[2]"))
    assert deepjson.loads('{"x":' + nested(n) + "}")["x"] == a  # wherever it was parsed


def test_a_shallow_value_is_exactly_what_json_loads_gives() -> None:
    text = '{"b": [1, 2.5, "\\u00e9"], "a": {"c": null}}'
    assert deepjson.loads(text) == json.loads(text)
    assert deepjson.dumps(json.loads(text)) == json.dumps(json.loads(text), ensure_ascii=False,
                                                          sort_keys=True)


# -- load() and calls() ------------------------------------------------------------------------
# (an inline object is parsed with its frame, several times: the same path, less deep)
FORMAT_DEPTHS = [(fmt, n) for fmt in _bodies("{}")
                 for n in ([5_000, 20_000] if "inline" in fmt else DEPTHS)]


@pytest.mark.parametrize(("fmt", "n"), FORMAT_DEPTHS)
def test_calls_answers_valid_json_for_deep_arguments(fmt: str, n: int) -> None:
    table = scl.calls(_bodies(nested(n))[fmt])
    assert table.valid_json.tolist() == [True] and table.args[0] == nested(n)


@pytest.mark.parametrize("fmt", ["anthropic", "openai-chat"])
def test_calls_answers_invalid_for_deep_arguments_cut_short(fmt: str) -> None:
    assert scl.calls(_bodies(nested(5_000)[:-1])[fmt]).valid_json.tolist() == [False]


@pytest.mark.parametrize("fmt", ["ollama (inline object)", "gemini (inline object)"])
def test_a_payload_past_orjson_s_depth_limit_is_no_invalid_json(fmt: str) -> None:
    df = scl.load(_bodies(nested(5_000))[fmt])  # strict: it would raise
    assert "args_delta" in set(df.kind) and df.problem.isna().all()


def test_a_deep_last_ndjson_line_without_its_line_end_is_a_frame() -> None:
    df = scl.load(ndjson(_ollama(nested(5_000))).rstrip(b"\n"))
    assert list(df.kind) == ["call_start", "args_delta", "block_stop"]


def test_the_accumulator_parses_deep_arguments() -> None:
    acc = Accumulator()
    for ev in ({"kind": "call_start", "block": 0, "call_id": "c", "tool": "f"},
               {"kind": "args_delta", "block": 0, "fragment": nested(5_000)},
               {"kind": "block_stop", "block": 0}):
        acc.feed(ev)
    [done] = acc.finish()
    assert done["error"] is None and done["input"] == deepjson.loads(nested(5_000))


# -- the analyses --------------------------------------------------------------------------------
def test_prefixes_read_deep_arguments_as_an_object_that_parses() -> None:
    assert top_type(nested(5_000)) == "object" and strict_parses(nested(5_000))


def test_escape_overhead_measures_deep_arguments() -> None:
    table = scl.calls(_bodies(nested(5_000, "[1, 2]"))["openai-chat"])
    assert escape_overhead(table).compact_chars.tolist() == [len(nested(5_000, "[1,2]"))]


def test_call_problems_read_deep_arguments() -> None:
    deltas = scl.load(_bodies(nested(5_000))["openai-chat"])
    assert scl.stats.call_problems(deltas).empty


def test_the_faults_parse_deep_arguments() -> None:
    assert parses(nested(5_000)) and json_value(nested(5_000)) == json_value(nested(5_000))


# -- the torture judge ---------------------------------------------------------------------------
CASE = cases(["openai-chat"], "quick", ["spaces"])[0]


@pytest.mark.parametrize("n", DEPTHS)
def test_the_judge_reads_a_deep_line_a_client_printed(n: int) -> None:
    run = Run(0)
    run.read('{"call_id": "c", "tool": "f", "input": ' + nested(n) + "}")
    run.read(nested(n))
    assert len(run.calls) == 1 and run.noise == [nested(n)]


def test_the_judge_compares_a_deep_parsed_input_with_what_was_sent() -> None:
    run = Run(0)
    run.read('{"call_id": "c", "tool": "f", "input": ' + nested(200_000) + "}")
    found, _ = verdict(CASE, run)
    assert found and all("Recursion" not in f.detail for f in found)


def test_a_producer_s_deep_arguments_cut_short_are_said_not_to_parse() -> None:
    from streamcalls_lab.producers._conform import broken_arguments

    aspect, why = broken_arguments(nested(5_000)[:-1], {"a": 1})
    assert aspect == "arguments_invalid" and "does not parse" in why


# -- past orjson's limits: nesting past 1,024, integers wider than a double ------------------
WIDE = "9" * 400


@pytest.mark.parametrize(("text", "value"), [
    ('{"n": ' + WIDE + "}", {"n": int(WIDE)}),
    ("[-" + "1" * 4300 + "]", [-int("1" * 4300)]),
    ("[" + WIDE + ".0e-100]", [float(WIDE + ".0e-100")]),
    (nested(1_100), "deep"),
])
def test_parse_reads_what_only_orjsons_limits_refuse(text: str, value: object) -> None:
    got = deepjson.parse(text.encode())
    assert got == (deepjson.loads(text) if value == "deep" else value)


@pytest.mark.parametrize("text", [
    "[" + WIDE + ".5]", "[1e999]", '{"n": ' + WIDE + ', "m": NaN}', "[" + "9" * 4301 + "]",
    '["\\ud800", ' + WIDE + "]", "[" + WIDE + ",]",
])
def test_parse_refuses_with_orjsons_own_error_what_is_past_a_double_or_not_json(
        text: str) -> None:
    """A float past a double's range is no number msgspec or orjson read; a wide integer
    beside anything else orjson refuses (NaN, a lone surrogate, a trailing comma) is refused
    for that, as orjson refuses it."""
    with pytest.raises(json.JSONDecodeError):
        deepjson.parse(text)
    with pytest.raises(json.JSONDecodeError):
        deepjson.parse(text.encode() + b"\xff")


def test_a_json_lines_log_holding_a_wide_integer_is_read_as_its_rebuilt_sse_is(
        tmp_path) -> None:
    """The importers parse with the decoder's rules: a line the decoder reads is never a
    'line is not JSON' error in the importer first."""
    from streamcalls_lab.importers import captures

    body = turns.anthropic(["Hi"])
    lines = [line[len(b"data: "):] for line in body.split(b"\n") if line.startswith(b"data: ")]
    lines[-1] = lines[-1][:-1] + b', "usage_note": ' + WIDE.encode() + b"}"
    log = tmp_path / "turn.chunks.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    [capture] = captures(log)
    df = scl.load(capture.chunks)
    assert df["problem"].isna().all() and (df["kind"] == "text_delta").any()


# Where orjson.loads may be called directly: each falls back to the decoder's rules itself
# (deepjson, the decoder and as_written try beyond_orjson on its refusal; the fast path and
# the Realtime time sniff leave a refused line to the decoder).
RAW_ORJSON = {"_deepjson.py", "decode.py", "providers/as_written.py", "_fastpath.py",
              "providers/openai_realtime.py"}


def test_every_reader_of_json_text_parses_by_the_decoders_rules() -> None:
    """A reader that parsed with orjson alone would call "not JSON" a line the decoder reads
    (an integer wider than a double, nesting past 1,024): importers, recorders, redaction,
    fixtures and trace readers parse with ``deepjson.parse``."""
    from pathlib import Path

    root = Path(deepjson.__file__).parent
    direct = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
              if "orjson.loads(" in p.read_text(encoding="utf-8")}
    assert direct == RAW_ORJSON


def test_a_websocket_message_holding_a_wide_integer_is_kept_and_a_wide_float_is_not() -> None:
    """The recorder keeps a message the decoder reads (the session's JSON lines are then
    read as a Realtime capture), and names one that no parser reads."""
    from streamcalls_lab.traffic.websocket import Message, line

    payload = b'{"type": "response.done", "n": ' + WIDE.encode() + b"}"
    written, why, _ = line(Message("server", False, payload, len(payload)), 0.0)
    assert why is None and payload in written
    wide_float = payload.replace(WIDE.encode(), WIDE.encode() + b".5")
    written, why, _ = line(Message("server", False, wide_float, len(wide_float)), 0.0)
    assert why is not None and "not JSON" in why and WIDE.encode() not in written
