"""redact: values gone, geometry kept (lengths, splits, escapes, bytes, timing, validity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamcalls_lab import calls, load, timing
from streamcalls_lab.redact import Redactor, fill, redact_bytes, redact_file, redact_paths

from .conftest import capture_files
from .support import turns

SALT = "test-salt"
GEOMETRY = ["seq", "offset", "t", "provider", "event", "kind", "block", "chars", "wire_chars",
            "frame"]
CALL_GEOMETRY = ["block", "tool", "n_deltas", "chars", "wire_chars", "complete", "valid_json",
                 "final_matches"]


def _args(body: bytes) -> list[str]:
    return calls(body).args.tolist()


def test_fill_keeps_utf8_length_and_ascii_class() -> None:
    for c in "aQ7é中😀":
        assert len(fill(c).encode()) == len(c.encode())
    assert [fill(c) for c in "aQ7-"] == ["x", "X", "0", "x"]


def test_fill_keeps_whitespace_and_every_character_with_a_short_escape() -> None:
    for c in ' \t\n\r"\\/\b\f':
        assert fill(c) == c


def test_keys_and_structure_stay_while_values_go() -> None:
    body = turns.anthropic(calls=[("lookup", ['{"ci', 'ty": "Pa', 'ris", "n": -0.5e3, ',
                                              '"ok": true, "tags": ["red"], "x": null}'])])
    (args,) = _args(redact_bytes(body, salt=SALT))
    assert args == '{"city": "Xxxxx", "n": -1.1e1, "ok": true, "tags": ["xxx"], "x": null}'


def test_every_split_position_and_fragment_length_is_kept() -> None:
    parts = ['{"q', 'uery": "wea', 'ther in ', 'Paris"', "}"]
    before = load(turns.anthropic(calls=[("lookup", parts)]))
    after = load(redact_bytes(turns.anthropic(calls=[("lookup", parts)]), salt=SALT))
    assert after[GEOMETRY].equals(before[GEOMETRY])


def test_a_json_escape_in_a_value_stays_that_escape() -> None:
    body = turns.anthropic(calls=[("lookup", ['{"a": "line one\\nline', ' two\\"quoted\\""}'])])
    (args,) = _args(redact_bytes(body, salt=SALT))
    assert args == '{"a": "xxxx xxx\\nxxxx xxx\\"xxxxxx\\""}'


def test_an_escape_split_across_fragments_is_still_read_as_one() -> None:
    body = turns.anthropic(calls=[("lookup", ['{"a": "x\\', 'u00e9y", "b\\', '"c": 1}'])])
    (args,) = _args(redact_bytes(body, salt=SALT))
    assert args == '{"a": "x\\u0078x", "b\\"c": 1}'  # hex digits of a value are data too


def test_a_wire_unicode_escape_stays_six_wire_characters() -> None:
    # json.dumps escapes non-ASCII, so "é" travels as \u00e9 inside the data line.
    body = turns.chat([(0, "call_1", "lookup", ['{"city": "Montr\u00e9al"}'])])
    assert b"\\u00e9" in body
    redacted = redact_bytes(body, salt=SALT)
    assert b"\\u00f8" in redacted and b"\\u00e9" not in redacted
    before, after = load(body), load(redacted)
    assert after.wire_chars.equals(before.wire_chars)
    assert after.chars.equals(before.chars)


def test_a_surrogate_pair_stays_a_surrogate_pair() -> None:
    body = turns.anthropic(text=["ok \U0001f600"])
    redacted = redact_bytes(body, salt=SALT)
    assert b"\\ud835\\udd69" in redacted
    assert load(redacted).wire_chars.equals(load(body).wire_chars)


def test_the_byte_length_never_changes() -> None:
    body = turns.anthropic(text=["Grüße, 世界 🌍"], calls=[("t", ['{"k": "ünïcödé 🙂"}'])])
    assert len(redact_bytes(body, salt=SALT)) == len(body)


def test_text_deltas_keep_their_whitespace_and_lose_their_words() -> None:
    body = turns.anthropic(text=["Hello ", "wide world.\n"])
    text = load(redact_bytes(body, salt=SALT)).query("kind == 'text_delta'").fragment.tolist()
    assert text == ["Xxxxx ", "xxxx xxxxxx\n"]


def test_ids_are_replaced_consistently_with_their_prefix_and_length() -> None:
    body = turns.responses(['{"a":', ' 1}'])  # call_id appears in .added and .done
    before = load(body)
    after = load(redact_bytes(body, salt=SALT))
    old = before.call_id.dropna().unique().tolist()
    new = after.call_id.dropna().unique().tolist()
    assert len(old) == len(new) == 1
    assert new[0] != old[0]
    assert new[0].startswith("call_") and len(new[0]) == len(old[0])


def test_the_same_salt_gives_the_same_output_and_another_salt_other_ids() -> None:
    body = turns.chat([(0, "call_Zx81Kq", "lookup", ["{}"])])
    assert redact_bytes(body, salt="a") == redact_bytes(body, salt="a")
    assert redact_bytes(body, salt="a") != redact_bytes(body, salt="b")


def test_one_redactor_maps_an_id_the_same_way_in_every_file() -> None:
    redactor = Redactor(SALT)
    first = redactor.capture(turns.chat([(0, "call_shared1", "a", ["{}"])]))
    second = redactor.capture(turns.chat([(0, "call_shared1", "b", ["{}"])]))
    assert load(first).call_id.dropna().tolist() == load(second).call_id.dropna().tolist()


def test_a_done_event_still_matches_its_fragments() -> None:
    body = turns.responses(['{"city": "Pa', 'ris", "n": 5}'])
    before, after = calls(body), calls(redact_bytes(body, salt=SALT))
    assert bool(after.final_matches.iloc[0]) and bool(before.final_matches.iloc[0])
    assert after.args.iloc[0] == '{"city": "Xxxxx", "n": 1}'


def test_a_truncated_last_frame_is_redacted_too() -> None:
    body = turns.anthropic(text=["secretword"])
    cut = body[: body.index(b"secretword") + len("secretword") + 2]  # no line end, no blank
    redacted = redact_bytes(cut, salt=SALT)
    assert b"secretword" not in redacted
    assert len(redacted) == len(cut)


def test_data_that_is_not_json_is_all_filler_except_done() -> None:
    body = b"data: plain words here\n\ndata: [DONE]\n\n"
    assert redact_bytes(body, salt=SALT) == b"data: xxxxx xxxxx xxxx\n\ndata: [DONE]\n\n"


def test_a_redacted_file_keeps_the_timing_sidecar_byte_for_byte(tmp_path: Path) -> None:
    src = tmp_path / "in" / "turn.sse"
    src.parent.mkdir()
    body = turns.anthropic(text=["Hi"], calls=[("t", ['{"a": "b"}'])])
    src.write_bytes(body)
    timing.write(src, [(0.0, 7), (0.5, len(body) - 7)])
    dst = redact_file(src, tmp_path / "out" / "turn.sse", redactor=Redactor(SALT))
    assert timing.sidecar(dst).read_bytes() == timing.sidecar(src).read_bytes()
    assert load(dst)["t"].equals(load(src)["t"])


def test_redacting_in_place_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "turn.sse"
    src.write_bytes(turns.anthropic(text=["Hi"]))
    with pytest.raises(ValueError, match="in place"):
        redact_file(src, src)


def test_redact_paths_keeps_a_directory_layout(tmp_path: Path) -> None:
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "sub" / "a.sse").write_bytes(turns.anthropic(text=["Hi"]))
    written = redact_paths([tmp_path / "in"], tmp_path / "out", salt=SALT, progress=False)
    assert written == [tmp_path / "out" / "sub" / "a.sse"]


# -- real captures -------------------------------------------------------------------------
def _leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return []


@pytest.fixture(scope="module")
def real(captures: Path) -> list[tuple[str, bytes, bytes]]:
    """(name, original, redacted) for every eighth capture of the three formats (~85 files)."""
    redactor = Redactor(SALT)
    return [(p.name, b, redactor.capture(b)) for p in capture_files()[::8]
            for b in [p.read_bytes()]]


@pytest.mark.captures
def test_real_captures_keep_their_fragment_geometry(real: list[tuple[str, bytes, bytes]]) -> None:
    for name, body, redacted in real:
        assert len(redacted) == len(body), name
        before = load(body, strict=False, name="x")
        after = load(redacted, strict=False, name="x")
        pd.testing.assert_frame_equal(after[GEOMETRY], before[GEOMETRY], obj=name)
        assert after.problem.isna().equals(before.problem.isna()), name
        pd.testing.assert_frame_equal(calls(after)[CALL_GEOMETRY], calls(before)[CALL_GEOMETRY],
                                      obj=name)


@pytest.mark.captures
def test_real_captures_keep_no_argument_value_or_text_word(
    real: list[tuple[str, bytes, bytes]],
) -> None:
    checked = 0
    for name, body, redacted in real:
        before = load(body, strict=False, name="x")
        after = load(redacted, strict=False, name="x")
        # What the redacted capture says as data: argument values and text (keys are schema).
        values = [v for a in calls(after).query("valid_json").args for v in _leaves(json.loads(a))]
        shared = "\n".join(values + after.query("kind == 'text_delta'").fragment.dropna().tolist())
        for args in calls(before).query("valid_json").args:
            for value in _leaves(json.loads(args)):
                if len(value) >= 3 and any(c.isalnum() for c in value):
                    assert value not in shared, (name, value)
                    checked += 1
        words = " ".join(before.query("kind == 'text_delta'").fragment.dropna()).split()
        for word in words:
            if len(word) >= 4 and word.isalpha():
                assert word not in shared, (name, word)
                checked += 1
    assert checked > 200


@pytest.mark.captures
def test_real_call_ids_are_all_replaced_one_to_one(real: list[tuple[str, bytes, bytes]]) -> None:
    for name, body, redacted in real:
        old = calls(body, strict=False).call_id
        new = calls(redacted, strict=False).call_id
        pairs = {(o, n) for o, n in zip(old, new, strict=True) if isinstance(o, str) and len(o) > 8}
        assert all(o != n and len(o) == len(n) for o, n in pairs), name
        assert len({o for o, _ in pairs}) == len({n for _, n in pairs}), name


def test_logprob_byte_values_do_not_spell_the_token_out() -> None:
    body = (b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":'
            b'[{"token":"Hi","logprob":-0.1,"bytes":[72,105]}]}}]}\n\n')
    assert b'"bytes":[11,111]' in redact_bytes(body, salt=SALT)


def test_an_aws_event_stream_capture_is_redacted_with_valid_crcs() -> None:
    from .support.eventstream_turns import decode, event

    body = event("contentBlockDelta",
                 '{"contentBlockIndex":0,"delta":{"text":"Paris"},"p":"abcdef"}')
    redacted = Redactor("salt").capture(body)
    assert len(redacted) == len(body) and b"Paris" not in redacted
    [frame] = decode(redacted)  # strict: every CRC checks out
    assert frame.event == "contentBlockDelta"


# -- what the formats declare decides what is argument text ----------------------------------
def test_gemini_interactions_argument_fragments_are_lexed_per_call() -> None:
    from streamcalls_lab.turns import Call, script, turn_bytes

    body = turn_bytes("gemini-interactions", script([
        Call("lookup", "call_a1", ('{"ci', 'ty": "Pa', 'ris"}')),
        Call("lookup", "call_b2", ('{"n": ', '42}'))]))
    before, after = calls(body), calls(redact_bytes(body, salt=SALT))
    assert after.args.tolist() == ['{"city": "Xxxxx"}', '{"n": 11}']
    assert after[CALL_GEOMETRY].equals(before[CALL_GEOMETRY])
    assert after.call_id.nunique() == 2 and not set(after.call_id) & set(before.call_id)


def test_argument_text_that_is_not_json_is_all_filler() -> None:
    """A custom tool's free text: a lexer keeps a literal's first letters (``t`` of
    ``true``) until the word proves to be another, so such a call is redone as filler."""
    def event(kind: str, **fields: object) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

    body = b"".join([
        event("response.output_item.added", output_index=0, item={
            "type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "sh",
            "input": ""}),
        event("response.custom_tool_call_input.delta", output_index=0, delta="tell the"),
        event("response.custom_tool_call_input.delta", output_index=0, delta=" truth"),
        event("response.custom_tool_call_input.done", output_index=0, input="tell the truth"),
    ])
    (args,) = _args(redact_bytes(body, salt=SALT))
    assert args == "xxxx xxx xxxxx"
    assert b"truth" not in redact_bytes(body, salt=SALT)


def test_a_format_added_as_one_module_is_redacted_from_its_declaration() -> None:
    """Issue 18's example: the AI SDK UI stream, known to redact.py only by its FORMAT."""
    from streamcalls_lab.turns import Call, script, turn_bytes

    body = turn_bytes("ai-sdk-ui", script([Call("weather", "call_first1", ('{"city": ',
                                                                           '"Paris"}')),
                                           Call("weather", "call_other2", ('{"city": "Rome"}',))]))
    after = calls(redact_bytes(body, salt=SALT))
    assert after.args.tolist() == ['{"city": "Xxxxx"}', '{"city": "Xxxx"}']
    assert after.valid_json.all() and after.call_id.nunique() == 2
