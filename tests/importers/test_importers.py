"""importers: HAR, VCR and JSON-lines recordings become loadable captures; credentials never do."""

from __future__ import annotations

import base64
import csv
import gzip
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
import yaml

from streamcalls_lab import CaptureError, calls, load, provenance, timing
from streamcalls_lab import turns as turns_of
from streamcalls_lab.importers import import_file, import_paths, jsonl, vcr
from streamcalls_lab.turns import Call, Text

from ..conftest import CAPTURES
from ..support import turns

BODY = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"city": "Par', 'is"}'])])
OTHER = turns.chat([(0, "call_c", "lookup", ['{"q":', ' 1}'])])
SECRETS = {
    "authorization": "Bearer sk-secret-authorization-value",
    "x-api-key": "sk-ant-secret-x-api-key-value",
    "api-key": "azure-secret-api-key-value",
    "cookie": "session=secret-cookie-value",
}


def _grep(root: Path, needles: list[str]) -> list[tuple[str, str]]:
    return [(p.name, n) for p in root.rglob("*") if p.is_file()
            for n in needles if n.encode() in p.read_bytes()]


def _needles() -> list[str]:
    return [v.split(" ", 1)[-1] for v in SECRETS.values()] + ["secret-query-key"]


# -- HAR -----------------------------------------------------------------------------------
def _entry(body: bytes, *, mime: str = "text/event-stream", b64: bool = False,
           messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    content: dict[str, Any] = {"mimeType": mime, "size": len(body)}
    if body:
        content["text"] = base64.b64encode(body).decode() if b64 else body.decode()
        if b64:
            content["encoding"] = "base64"
    entry: dict[str, Any] = {
        "startedDateTime": "2025-01-01T00:00:00.000Z",
        "request": {
            "method": "POST",
            "url": "https://api.example.com/v1/messages?key=secret-query-key&beta=true",
            "headers": [{"name": k, "value": v} for k, v in SECRETS.items()]
            + [{"name": "content-type", "value": "application/json"}],
            "cookies": [{"name": "session", "value": "secret-cookie-value"}],
        },
        "response": {
            "status": 200,
            "headers": [{"name": "Content-Type", "value": mime},
                        {"name": "Set-Cookie", "value": "session=secret-cookie-value"},
                        {"name": "request-id", "value": "req_123"}],
            "content": content,
        },
        "timings": {"wait": 120, "receive": 900},
    }
    if messages is not None:
        entry["_eventSourceMessages"] = messages
    return entry


def _har(tmp_path: Path, *entries: dict[str, Any]) -> Path:
    path = tmp_path / "session.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": list(entries)}}))
    return path


def test_har_event_stream_entries_become_byte_exact_captures(tmp_path: Path) -> None:
    har = _har(tmp_path, _entry(b'{"ok":1}', mime="application/json"), _entry(BODY),
               _entry(OTHER, b64=True))
    written = import_file(har, tmp_path / "out")
    assert [p.name for p in written] == ["session__e1.sse", "session__e2.sse"]
    assert written[0].read_bytes() == BODY
    assert written[1].read_bytes() == OTHER


def test_har_credentials_are_never_carried_over(tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_file(_har(tmp_path, _entry(BODY)), out)
    assert _grep(out, _needles()) == []
    meta = provenance.read(out / "session__e0.sse")
    assert meta is not None
    assert set(meta["request_headers"]) == {"content-type"}
    assert set(meta["response_headers"]) == {"content-type", "request-id"}
    assert meta["url"] == "https://api.example.com/v1/messages?key=REDACTED&beta=true"


def test_har_without_per_event_times_gets_no_timing_sidecar(tmp_path: Path) -> None:
    (path,) = import_file(_har(tmp_path, _entry(BODY)), tmp_path / "out")
    assert timing.read(path) is None


def test_har_event_times_become_one_timed_read_per_frame(tmp_path: Path) -> None:
    n = len(load(BODY))  # one event per frame in this turn
    times = [100.0 + 0.25 * i for i in range(n)]
    messages = [{"time": t, "eventName": "x", "data": ""} for t in times]
    (path,) = import_file(_har(tmp_path, _entry(BODY, messages=messages)), tmp_path / "out")
    assert load(path)["t"].tolist() == pytest.approx([0.25 * i for i in range(n)])


def test_har_messages_without_a_body_are_rebuilt_and_say_so(tmp_path: Path) -> None:
    frames = load(BODY, raw=True)
    messages = [{"time": float(i), "eventName": e, "eventId": "", "data": d}
                for i, (e, d) in enumerate(zip(frames.event, frames.data, strict=True))]
    (path,) = import_file(_har(tmp_path, _entry(b"", messages=messages)), tmp_path / "out")
    assert load(path).drop(columns=["t", "offset"]).equals(
        load(BODY, name="session__e0").drop(columns=["t", "offset"]))
    assert "not as sent" in (provenance.read(path) or {})["note"]


@pytest.mark.parametrize("field", ["eventName", "eventId"])
def test_har_messages_with_a_line_break_where_sse_cannot_carry_one_are_refused(
    tmp_path: Path, field: str,
) -> None:
    messages = [{"time": 0.0, "eventName": "x", "eventId": "1", "data": "{}"}]
    messages[0][field] = "a\nevent: forged"
    with pytest.raises(CaptureError, match=r"entry 0: byte 0: _eventSourceMessages\[0\]"):
        import_file(_har(tmp_path, _entry(b"", messages=messages)), tmp_path / "out")


def test_load_reads_a_har_directly(tmp_path: Path) -> None:
    har = _har(tmp_path, _entry(BODY), _entry(OTHER))
    df = load(har)
    assert df["turn"].unique().tolist() == ["session__e0", "session__e1"]
    pd.testing.assert_frame_equal(df[df.turn == "session__e0"].reset_index(drop=True),
                                  load(BODY, name="session__e0"), check_categorical=False)


# -- VCR -----------------------------------------------------------------------------------
def _cassette(tmp_path: Path, body: bytes | str, headers: dict[str, list[str]]) -> Path:
    data = {"interactions": [
        {"request": {"method": "POST", "uri": "https://api.example.com/v1/chat",
                     "body": "{}", "headers": {k: [v] for k, v in SECRETS.items()}},
         "response": {"status": {"code": 200, "message": "OK"},
                      "headers": {"Content-Type": ["application/json"]},
                      "body": {"string": '{"token": "x"}'}}},
        {"request": {"method": "POST", "uri": "https://api.example.com/v1/chat",
                     "body": "{}", "headers": {k: [v] for k, v in SECRETS.items()}},
         "response": {"status": {"code": 200, "message": "OK"}, "headers": headers,
                      "body": {"string": body}}},
    ]}
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_vcr_text_body_becomes_the_capture(tmp_path: Path) -> None:
    path = _cassette(tmp_path, BODY.decode(), {"Content-Type": ["text/event-stream"]})
    assert [p.name for p in import_file(path, tmp_path / "out")] == ["cassette__i1.sse"]
    assert (tmp_path / "out" / "cassette__i1.sse").read_bytes() == BODY


def test_vcr_binary_gzip_body_is_gunzipped(tmp_path: Path) -> None:
    path = _cassette(tmp_path, gzip.compress(BODY),  # safe_dump writes bytes as !!binary
                     {"Content-Type": ["text/event-stream"], "Content-Encoding": ["gzip"]})
    assert "!!binary" in path.read_text()
    (out,) = import_file(path, tmp_path / "out")
    assert out.read_bytes() == BODY


def test_vcr_credentials_are_never_carried_over(tmp_path: Path) -> None:
    path = _cassette(tmp_path, BODY.decode(), {"Content-Type": ["text/event-stream"],
                                               "Set-Cookie": [SECRETS["cookie"]]})
    out = tmp_path / "out"
    import_file(path, out)
    assert _grep(out, _needles()) == []
    meta = provenance.read(out / "cassette__i1.sse") or {}
    assert meta["request_headers"] == {}


def test_vcr_without_content_type_is_recognised_by_its_first_line() -> None:
    assert vcr.is_event_stream("", b"event: message_start\ndata: {}\n\n")
    assert not vcr.is_event_stream("", b'{"choices": []}')


def _cassette_copies() -> dict[str, dict[int, str]]:
    """cassette -> {interaction: .sse file} as INDEX.tsv records them."""
    out: dict[str, dict[int, str]] = {}
    with (CAPTURES / "INDEX.tsv").open(encoding="utf-8") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            copy = re.search(r"cassette copy: (\S+\.yaml)", r["notes"])
            where = re.search(r"#interactions/(\d+)/response/body/string$", r["origin_path"])
            if copy and where and r["file"].endswith(".sse"):
                out.setdefault(copy.group(1), {})[int(where.group(1))] = r["file"]
    return out


@pytest.mark.captures
def test_every_real_cassette_reproduces_its_extracted_capture(captures: Path) -> None:
    copies = _cassette_copies()
    assert len(copies) > 400
    checked = 0
    for cassette, expected in copies.items():
        got = {int(s.name.rsplit("__i", 1)[1]): s.body for s in vcr.streams(captures / cassette)}
        for i, sse in expected.items():
            assert got.get(i) == (captures / sse).read_bytes(), f"{cassette} #{i}"
            checked += 1
    assert checked > 600


# -- JSON lines ----------------------------------------------------------------------------
def _strings(line: dict[str, Any]) -> list[tuple[str, str]]:
    """The argument and text fragments a provider event line carries, by kind."""
    kind = line.get("type")
    delta = line.get("delta")
    if kind == "content_block_delta":
        if delta.get("type") == "input_json_delta":
            return [("args_delta", delta["partial_json"])]
        if delta.get("type") == "text_delta":
            return [("text_delta", delta["text"])]
    if kind == "content_block_start":  # a call's input given whole in its start
        block = line.get("content_block") or {}
        if block.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use") and \
                block.get("input"):
            return [("args_delta", orjson.dumps(block["input"]).decode())]  # compact as sent
    if kind in ("response.function_call_arguments.delta", "response.mcp_call_arguments.delta",
                "response.custom_tool_call_input.delta"):
        return [("args_delta", delta)]
    if kind == "response.output_text.delta":
        return [("text_delta", delta)]
    return []


@pytest.mark.captures
@pytest.mark.parametrize("fmt", ["anthropic-messages", "openai-responses"])
def test_jsonl_rebuilt_frames_keep_every_fragment_exactly(fmt: str, captures: Path) -> None:
    files = sorted((captures / fmt).glob("vercel__ai__*.jsonl"))
    assert files
    for path in files:
        lines = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
        expected = [s for line in lines for s in _strings(line)]
        df = load(jsonl.rebuild(path.read_bytes()))
        got = df[df.kind.isin(["args_delta", "text_delta"])]
        assert list(zip(got.kind, got.fragment, strict=True)) == expected, path.name


def test_jsonl_frames_name_the_event_when_the_object_has_a_type() -> None:
    raw = b'{"type":"message_stop"}\n{"object":"chat.completion.chunk","choices":[]}\n'
    assert jsonl.rebuild(raw) == (
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
        b'data: {"object":"chat.completion.chunk","choices":[]}\n\n'
    )


def test_jsonl_line_text_is_kept_byte_for_byte_and_blank_lines_skipped() -> None:
    line = '{"type":"x","delta":"caf\\u00e9 \u00e9"}'
    assert jsonl.rebuild(("\n" + line + "\r\n\n").encode()) == (
        b'event: x\ndata: ' + line.encode() + b"\n\n")


def test_jsonl_an_event_type_holding_a_line_break_is_refused_at_its_offset() -> None:
    with pytest.raises(CaptureError, match="byte 8: event type cannot be an SSE event"):
        jsonl.rebuild(b'{"a":1}\n{"type":"a\\nevent: forged"}\n')


def test_jsonl_a_line_that_is_not_json_is_refused_at_its_offset() -> None:
    with pytest.raises(CaptureError, match="byte 8: line is not JSON"):
        jsonl.rebuild(b'{"a":1}\n{"a":\n')


def test_jsonl_provenance_says_the_framing_is_rebuilt(tmp_path: Path) -> None:
    src = tmp_path / "chunks.jsonl"
    src.write_text('{"type":"message_stop"}\n')
    (out,) = import_file(src, tmp_path / "out")
    assert "not as sent" in (provenance.read(out) or {})["note"]


# -- the browser side ------------------------------------------------------------------------
def _browser_side(fmt: str) -> bytes:
    return turns_of.turn_bytes(fmt, turns_of.script([Text(("Hi",)), Call(
        "lookup", "call_1", ('{"city": "Par', 'is"}'))]))


def _recording(kind: str, tmp_path: Path, body: bytes) -> Path:
    if kind == "har":
        return _har(tmp_path, _entry(body))
    if kind == "vcr":
        return _cassette(tmp_path, body.decode(), {"Content-Type": ["text/event-stream"]})
    path = tmp_path / "chunks.jsonl"  # the events' data, one a line, as a chunk log has them
    lines = [line.removeprefix("data: ") for line in body.decode().split("\n")
             if line.startswith("data: ") and line != "data: [DONE]"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("kind", ["har", "vcr", "jsonl"])
@pytest.mark.parametrize("fmt", ["ai-sdk-ui", "ag-ui"])
def test_a_browser_side_stream_imports_and_loads_under_its_own_name(
        fmt: str, kind: str, tmp_path: Path) -> None:
    body = _browser_side(fmt)
    (out,) = import_file(_recording(kind, tmp_path, body), tmp_path / "out")
    if kind != "jsonl":  # a chunk log's framing is rebuilt
        assert out.read_bytes() == body
    events = load(out)
    assert set(events["provider"]) == {fmt} and events["problem"].isna().all()
    got = calls(events)
    assert got[["call_id", "tool", "args"]].values.tolist() == [
        ["call_1", "lookup", '{"city": "Paris"}']]
    assert provenance.read(out) is not None


# -- dispatch ------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "text", "error", "reason"), [
    ("x.har", "[]", CaptureError, "not a HAR"),
    ("x.txt", "", ValueError, "unknown recording format"),
], ids=["not-a-har", "unknown-suffix"])
def test_a_file_import_file_cannot_read_is_refused(
    name: str, text: str, error: type[Exception], reason: str, tmp_path: Path
) -> None:
    src = tmp_path / name
    src.write_text(text)
    with pytest.raises(error, match=reason):
        import_file(src, tmp_path / "out")


def test_import_paths_takes_every_format_in_one_go(tmp_path: Path) -> None:
    src = tmp_path / "chunks.jsonl"
    src.write_text('{"type":"message_stop"}\n')
    har = _har(tmp_path, _entry(BODY))
    written = import_paths([src, har], tmp_path / "out", progress=False)
    assert sorted(p.name for p in written) == ["chunks.sse", "session__e0.sse"]
