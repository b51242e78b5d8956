"""redact on hostile input: secrets planted in every position each format allows are gone
(or kept on purpose, as the module's policy says), and what cannot be read is refused."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from streamcalls_lab import cli, load
from streamcalls_lab.redact import Redactor, Refused, redact_paths

from .support.eventstream_turns import decode, event, string

SALT = "s"
MARK = "Zsecret"  # every planted value holds it; filler never spells it
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


def _sse(*frames: tuple[str | None, object]) -> bytes:
    out = []
    for name, payload in frames:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {payload if isinstance(payload, str) else json.dumps(payload)}"
                   "\n\n")
    return "".join(out).encode()


def _planted(tag: str) -> dict[str, object]:
    """An object argument with a marker under every key that is schema elsewhere."""
    return {"name": f"{MARK}-{tag}-n", "role": f"{MARK}-r", "status": f"{MARK}-s",
            "type": f"{MARK}-t", "model": f"{MARK}-m", "id": f"{MARK}-i", "age": 987654321,
            "nested": {"name": f"{MARK}-deep", "list": [f"{MARK}-l", 123456789]}}


ANTHROPIC = _sse(
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_01", "model": "claude", "content": [{"type": "text", "text": f"{MARK} m"}],
        "usage": {"input_tokens": 5}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
        "type": "thinking", "thinking": f"{MARK} think", "signature": f"{MARK}sig"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
        "type": "thinking_delta", "thinking": f"{MARK} more"}}),
    ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": f"toolu_{MARK}", "name": "lookup",
        "input": _planted("a")}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
        "type": "input_json_delta",
        "partial_json": json.dumps({"q": f"{MARK} arg", "n": 424242})}}),
    ("content_block_start", {"type": "content_block_start", "index": 2, "content_block": {
        "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
            {"type": "web_search_result", "url": f"https://{MARK}.example", "title": MARK}]}}),
    ("error", {"type": "error", "error": {"type": "overloaded_error", "message": MARK}}),
)
CHAT = _sse(
    (None, {"id": f"chatcmpl-{MARK}", "choices": [{"index": 0, "delta": {
        "content": f"{MARK} text", "tool_calls": [{"index": 0, "id": f"call_{MARK}",
        "type": "function", "function": {"name": "lookup",
                                         "arguments": json.dumps({"k": f"{MARK} x"})}}]}}]}),
    (None, "[DONE]"),
)
RESPONSES = _sse(
    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
        "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
                 "arguments": ""}}),
    ("response.function_call_arguments.delta", {
        "type": "response.function_call_arguments.delta", "output_index": 0,
        "delta": json.dumps({"k": MARK})}),
    ("response.function_call_arguments.done", {
        "type": "response.function_call_arguments.done", "output_index": 0,
        "arguments": json.dumps({"k": MARK})}),
    ("response.output_text.delta", {"type": "response.output_text.delta", "delta": MARK}),
)
GEMINI = _sse(
    (None, {"candidates": [{"content": {"role": "model", "parts": [
        {"text": f"{MARK} words"},
        {"functionCall": {"name": "lookup", "args": _planted("g")}}]}}],
        "modelVersion": "gemini-2.5", "responseId": f"{MARK}rid"}),
)
VERTEX_PARTIAL = _sse(  # Vertex AI streams arguments as partialArgs pieces
    (None, {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {
        "name": "lookup", "partialArgs": [
            {"jsonPath": "$.city", "stringValue": MARK},
            {"jsonPath": "$.n", "numberValue": 987654321}], "willContinue": True}}]}}]}),
)
OLLAMA_AS_SSE = _sse(  # Ollama's message shape: arguments as an object
    (None, {"model": "llama3", "created_at": f"2025-{MARK}", "message": {
        "role": "assistant", "content": MARK, "tool_calls": [
            {"function": {"name": "lookup", "arguments": _planted("o")}}]}, "done": False}),
)
COHERE = _sse(
    ("tool-call-start", {"type": "tool-call-start", "index": 0, "delta": {"message": {
        "tool_plan": MARK, "tool_calls": {"id": f"lookup_{MARK}", "type": "function",
        "function": {"name": "lookup", "arguments": ""}}}}}),
    ("tool-call-delta", {"type": "tool-call-delta", "index": 0, "delta": {"message": {
        "tool_calls": {"function": {"arguments": json.dumps({"k": MARK})}}}}}),
)
UNKNOWN_FORMAT = _sse(  # a format nobody listed: its envelope is unknown, so all of it is data
    ("call", {"kind": "call", "payload": {"name": MARK, "type": MARK, "count": 31337}}),
)
FIELDS = (  # the SSE layer itself: comments, id:, retry:, a BOM, an ignored line
    "\ufeffdata: {\"text\": \"" + MARK + " bom\"}\n\n"
    ": " + MARK + " comment\n"
    "id: " + MARK + "-id\n"
    "retry: " + MARK + "\n"
    " data: " + MARK + " indented, so not a field\n"
    "data: {\"text\": \"" + MARK + " after\"}\n\n"
).encode()
BAD_LINES = (  # a frame with one bad line: broken JSON, invalid UTF-8
    b'data: {"text": "ok"}\n\n'
    b'data: {"text": ' + MARK.encode() + b' unquoted, "n": 5}\n\n'
    b'data: {"text": "' + MARK.encode() + b' \xff\xfe bad bytes"}\n\n'
    b'data: {"text": "' + MARK.encode() + b' two"}\ndata: not json ' + MARK.encode() + b'\n\n'
)
BAD_ID = (  # an id: line whose bytes are not UTF-8 (the fuzz test found it crashing)
    b"id: " + MARK.encode() + b"\x93\xfe-id\n" + b'data: {"text": "ok"}\n\n'
)
SSE_BODIES = {"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES, "gemini": GEMINI,
              "vertex-partial": VERTEX_PARTIAL,
              "ollama": OLLAMA_AS_SSE, "cohere": COHERE, "unknown": UNKNOWN_FORMAT,
              "fields": FIELDS, "bad-lines": BAD_LINES, "bad-id": BAD_ID}


def _bedrock() -> bytes:
    return b"".join([
        event("contentBlockStart", json.dumps({"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": f"tooluse_{MARK}", "name": "lookup"}}})),
        event("contentBlockDelta", json.dumps({"contentBlockIndex": 0, "delta": {"toolUse": {
            "input": json.dumps({"k": MARK, "n": 8675309})}}, "p": MARK})),
        event("contentBlockDelta", json.dumps({"contentBlockIndex": 1, "delta": {
            "text": MARK}}), extra=string("x-custom", MARK)),
    ])


def _invoke() -> bytes:
    """InvokeModel: Anthropic's events wrapped in base64 ``bytes``."""
    return b"".join(event("chunk", json.dumps({"bytes": base64.b64encode(json.dumps(inner)
                                                                         .encode()).decode()}))
                    for inner in ({"type": "content_block_delta", "index": 0, "delta": {
                        "type": "text_delta", "text": f"{MARK} wrapped"}},))


@pytest.mark.parametrize("name", sorted(SSE_BODIES))
def test_no_planted_secret_survives_in_any_sse_position(name: str) -> None:
    body = SSE_BODIES[name]
    redacted = Redactor(SALT).capture(body)
    assert len(redacted) == len(body)
    assert MARK.encode() not in redacted
    assert not re.search(rb"(987654321|123456789|424242|31337)", redacted)


def test_no_planted_secret_survives_in_an_event_stream_and_every_crc_checks() -> None:
    body = _bedrock()
    redacted = Redactor(SALT).capture(body)
    assert len(redacted) == len(body) and MARK.encode() not in redacted
    assert b"8675309" not in redacted
    assert [f.event for f in decode(redacted)] == [f.event for f in decode(body)]


def test_a_wrapped_invoke_event_is_unwrapped_redacted_and_wrapped_again() -> None:
    body = _invoke()
    redacted = Redactor(SALT).capture(body)
    assert len(redacted) == len(body) and MARK.encode() not in redacted
    inner = json.loads(decode(redacted)[-1].data)["bytes"]
    assert json.loads(base64.b64decode(inner))["delta"]["type"] == "text_delta"
    assert MARK not in base64.b64decode(inner).decode()


def test_what_the_policy_keeps_on_purpose_is_kept() -> None:
    """Tool names, event names, types and model under known envelopes, ids' prefixes, keys,
    indexes and token counts: structure the geometry needs, documented in the module."""
    assert b'"jsonPath": "$.city"' in Redactor(SALT).capture(VERTEX_PARTIAL)
    redacted = Redactor(SALT).capture(ANTHROPIC).decode()
    for kept in ('"name": "lookup"', "event: content_block_start", '"type": "tool_use"',
                 '"model": "claude"', '"index": 1', '"input_tokens": 5', "toolu_", '"age": '):
        assert kept in redacted


def test_a_redacted_capture_still_loads_to_the_same_geometry() -> None:
    for body in (ANTHROPIC, CHAT, RESPONSES, GEMINI):
        before, after = load(body, strict=False), load(Redactor(SALT).capture(body),
                                                       strict=False)
        cols = ["offset", "event", "kind", "block", "tool", "chars", "wire_chars"]
        assert after[cols].equals(before[cols])


def test_an_unknown_id_prefix_is_replaced_not_kept() -> None:
    assert not Redactor(SALT).id("SECRETKEY_abc123").startswith("SECRETKEY_")
    assert Redactor(SALT).id("toolu_abc123").startswith("toolu_")


UNREADABLE = {
    "empty": b"",
    "png": PNG,
    "cut-in-first-frame": b'data: {"type": "message_start", "secret": "' + MARK.encode(),
    "event-stream-cut-in-first-message": event("messageStart", json.dumps({"x": MARK}))[:-9],
}


JSON_LINES = {  # once refused as unreadable: the one framing registry reads them as NDJSON
    "json-lines": b'{"type": "message_start"}\n{"type": "content_block_delta", "x": "s"}\n',
    "har": json.dumps({"log": {"entries": [{"response": {"content": {"text": MARK}}}]}},
                      indent=2).encode(),
}


@pytest.mark.parametrize("name", sorted(JSON_LINES))
def test_json_lines_are_redacted_as_load_reads_them_and_keep_no_value(name: str) -> None:
    """``load()`` and redaction take the framing from one detection (issue 28): what one
    reads the other redacts, and every value in it is replaced."""
    body = JSON_LINES[name]
    out = Redactor(SALT).capture(body, name)
    assert MARK.encode() not in out and b'"s"' not in out
    assert len(load(out, strict=False)) == len(load(body, strict=False))


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_what_cannot_be_read_as_a_capture_is_refused(name: str) -> None:
    with pytest.raises(Refused, match=r"refusing to redact"):
        Redactor(SALT).capture(UNREADABLE[name], name)


def test_the_cli_refuses_each_unreadable_file_by_name_and_writes_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for name, body in UNREADABLE.items():
        (src / f"{name}.sse").write_bytes(body)
    (src / "good.sse").write_bytes(ANTHROPIC)
    assert cli.main(["redact", str(src), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    for name in UNREADABLE:
        assert f"{name}.sse" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["good.sse"]


def test_refusals_are_collected_and_the_rest_still_written(tmp_path: Path) -> None:
    (tmp_path / "a.sse").write_bytes(b"")
    (tmp_path / "b.sse").write_bytes(CHAT)
    refused: list[Refused] = []
    written = redact_paths([tmp_path / "a.sse", tmp_path / "b.sse"], tmp_path / "out",
                           progress=False, refused=refused)
    assert [p.name for p in written] == ["b.sse"] and [e.source for e in refused] == [
        str(tmp_path / "a.sse")]


def test_same_named_inputs_from_two_folders_each_get_their_own_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    for folder, body in (("a", ANTHROPIC), ("b", CHAT)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "turn.sse").write_bytes(body)
    assert cli.main(["redact", str(tmp_path / "a" / "turn.sse"), str(tmp_path / "b" / "turn.sse"),
                     "--out", str(tmp_path / "out")]) == 0
    assert "redacted 2" in capsys.readouterr().out
    out = sorted((tmp_path / "out").iterdir())
    assert len(out) == 2 and all(re.fullmatch(r"turn-[0-9a-f]{8}\.sse", p.name) for p in out)
    assert sorted(len(p.read_bytes()) for p in out) == sorted((len(ANTHROPIC), len(CHAT)))
    assert {load(p).provider.iloc[0] for p in out} == {"anthropic-messages", "openai-chat"}


def test_same_named_captures_in_two_directories_each_get_their_own_output(
        tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder / "sub").mkdir(parents=True)
        (tmp_path / folder / "sub" / "turn.sse").write_bytes(CHAT)
    written = redact_paths([tmp_path / "a", tmp_path / "b"], tmp_path / "out", progress=False)
    assert len(set(written)) == 2 and all(p.exists() for p in written)


def test_a_file_named_twice_is_redacted_once(tmp_path: Path) -> None:
    (tmp_path / "turn.sse").write_bytes(CHAT)
    written = redact_paths([tmp_path / "turn.sse", tmp_path / "." / "turn.sse"],
                           tmp_path / "out", progress=False)
    assert written == [tmp_path / "out" / "turn.sse"]


def test_a_timing_sidecar_that_is_not_one_is_refused_and_nothing_written(
        tmp_path: Path) -> None:
    (tmp_path / "turn.sse").write_bytes(CHAT)
    (tmp_path / "turn.sse.timing.tsv").write_text(f"t\tbytes\nAuthorization: Bearer {MARK}\n")
    refused: list[Refused] = []
    written = redact_paths([tmp_path / "turn.sse"], tmp_path / "out", progress=False,
                           refused=refused)
    assert written == [] and refused[0].source.endswith(".timing.tsv")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_provenance_sidecar_is_never_written(tmp_path: Path) -> None:
    """Headers and URL live in ``.meta.json``: redaction writes the capture and its timing
    only, so no header value (a credential the scrubbers missed) reaches the output."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "turn.sse").write_bytes(CHAT)
    (tmp_path / "in" / "turn.sse.meta.json").write_text(json.dumps(
        {"url": f"https://x.example/?key={MARK}", "headers": {"x-api-key": MARK}}))
    redact_paths([tmp_path / "in"], tmp_path / "out", progress=False)
    files = list((tmp_path / "out").rglob("*"))
    assert [p.name for p in files] == ["turn.sse"]
    assert MARK.encode() not in files[0].read_bytes()


def test_an_event_stream_message_with_a_wrong_crc_stays_wrong_and_others_stay_right() -> None:
    first = bytearray(event("contentBlockDelta", json.dumps({"contentBlockIndex": 0,
                                                             "delta": {"text": MARK}})))
    first[-1] ^= 0xFF  # its message CRC no longer matches
    body = bytes(first) + event("messageStop", '{"stopReason":"end_turn"}')
    redacted = Redactor(SALT).capture(body)
    assert MARK.encode() not in redacted
    assert [f.problem is None for f in decode(redacted, strict=False)] == [
        f.problem is None for f in decode(body, strict=False)]


def test_an_event_stream_cut_mid_message_keeps_no_byte_of_the_cut_payload() -> None:
    body = event("messageStart", '{"role":"assistant"}') + event(
        "contentBlockDelta", json.dumps({"delta": {"text": MARK}}))[:-6]
    redacted = Redactor(SALT).capture(body)
    assert len(redacted) == len(body) and MARK.encode() not in redacted


def test_an_ndjson_capture_is_redacted_line_by_line(tmp_path: Path) -> None:
    lines = [{"model": "llama3", "message": {"role": "assistant", "content": MARK,
              "tool_calls": [{"function": {"name": "lookup", "arguments": _planted("n")}}]},
              "done": False}, {"model": "llama3", "done": True, "eval_count": 31337}]
    src = tmp_path / "in" / "turn.ndjson"
    src.parent.mkdir()
    body = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    src.write_bytes(body)
    [out] = redact_paths([tmp_path / "in"], tmp_path / "out", progress=False)
    redacted = out.read_bytes()
    assert len(redacted) == len(body) and MARK.encode() not in redacted
    assert [json.loads(x)["done"] for x in redacted.splitlines()] == [False, True]


def _gemini_array(*chunks: dict) -> bytes:
    """Gemini's streamed JSON array (no ?alt=sse), pretty-printed with CRLF separators."""
    return ("[" + "\r\n,\r\n".join(json.dumps(c, indent=2) for c in chunks) + "]").encode()


GEMINI_ARRAY = _gemini_array(
    {"candidates": [{"content": {"role": "model", "parts": [{"text": f"{MARK} words"}]}}]},
    {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "lookup", "args": _planted("arr")}}]},
        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 31337},
     "responseId": f"{MARK}rid"})


def test_a_streamed_json_array_is_redacted_element_by_element() -> None:
    redacted = Redactor(SALT).capture(GEMINI_ARRAY)
    assert len(redacted) == len(GEMINI_ARRAY) and MARK.encode() not in redacted
    assert not re.search(rb"(987654321|123456789)", redacted)
    cols = ["offset", "event", "kind", "block", "tool", "chars", "wire_chars"]
    assert load(redacted)[cols].equals(load(GEMINI_ARRAY)[cols])
    assert len(json.loads(redacted)) == 2


@pytest.mark.parametrize("cut", [len(GEMINI_ARRAY) - 1, len(GEMINI_ARRAY) // 2])
def test_a_json_array_that_breaks_off_is_refused_whole(cut: int) -> None:
    with pytest.raises(Refused, match="not a whole JSON array"):
        Redactor(SALT).capture(GEMINI_ARRAY[:cut], "cut.json")


def test_chat_content_sent_as_typed_parts_still_reads_as_text() -> None:
    """Mistral's ``delta.content`` list: its parts' types are Chat's structure, not another
    format's (the envelope that kept them was Anthropic's, stood in for every format)."""
    body = _sse((None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "content": [{"type": "thinking", "thinking": [{"type": "text", "text": MARK}]},
                    {"type": "text", "text": f"{MARK} said"}]}}]}))
    redacted = Redactor(SALT).capture(body)
    assert MARK.encode() not in redacted
    assert load(redacted).kind.tolist() == load(body).kind.tolist() == ["other", "text_delta"]


def test_gemini_candidates_keep_their_index() -> None:
    """Several candidates: each one's ``index`` places its calls (Gemini's own number)."""
    from .support.gemini_turns import CANDIDATES

    before, after = load(CANDIDATES), load(Redactor(SALT).capture(CANDIDATES))
    assert after.block.equals(before.block) and before.block.nunique() == 2


def test_a_count_is_kept_only_where_the_format_names_it() -> None:
    """Token counts are the format's own numbers (``usage.prompt_tokens``), not whatever a
    gateway names like one."""
    body = _sse((None, {"object": "chat.completion.chunk", "choices": [], "usage": {
        "prompt_tokens": 7, "gateway_tokens": 424242, "upstream_tokencount": 31337}}))
    redacted = Redactor(SALT).capture(body)
    assert b'"prompt_tokens": 7' in redacted
    assert not re.search(rb"(424242|31337)", redacted)
