"""Crafted bad input, per reader and for the receiver: a clear CaptureError naming the file
and byte, or a problem recorded on the span; never a crash, never a guess."""

from __future__ import annotations

import gzip
import http.client
import json

import pytest

from streamcalls_lab.cli import main
from streamcalls_lab.errors import CaptureError
from streamcalls_lab.tracing import MAX_DEPTH, read_trace
from streamcalls_lab.tracing.receiver import MAX_BODY, OTLPReceiver

from .conftest import DATA, otlp, span


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


@pytest.mark.parametrize("data, reason", [
    (b"{" * (MAX_DEPTH + 5) + b"}" * (MAX_DEPTH + 5), "nested"),
    (b'{"resourceSpans": [', "not JSON"),
    (b'{"resourceSpans": []}\n{"resourceSpans": [}\n', "not JSON"),
    (b"\xff\xfe{}", "not an OTLP protobuf"),  # not JSON's first byte: read as protobuf
    (b'{"spans": 3}', "neither an OTLP export"),
    (b"   ", "empty"),
    (b'{"resourceSpans": []}\n[1, 2]\n', "not an OTLP export"),
])
def test_unreadable_exports_name_file_and_reason(tmp_path, data, reason):
    path = _write(tmp_path, "bad.json", data)
    with pytest.raises(CaptureError) as e:
        read_trace(path)
    assert str(path) in str(e.value) and reason in e.value.reason


def test_jsonl_error_names_the_line_offset(tmp_path):
    path = _write(tmp_path, "t.jsonl", b'{"resourceSpans": []}\n{"resourceSpans": x}\n')
    with pytest.raises(CaptureError) as e:
        read_trace(path)
    assert e.value.offset >= 22  # inside the second line, not the first


def test_attribute_of_the_wrong_type_is_reported_not_crashed_on(tmp_path):
    bad = span(1, {"gen_ai.operation.name": "chat",
                   "gen_ai.output.messages": {"intValue": "7"},
                   "gen_ai.usage.output_tokens": "many",
                   "gen_ai.completion.0.tool_calls.0.arguments": {"boolValue": True},
                   "gen_ai.completion.0.tool_calls.0.name": {"arrayValue": 5},
                   "gen_ai.response.id": {"kvlistValue": {"values": []}}})
    bad["attributes"].append({"key": 3, "value": {}})
    bad["attributes"].append({"key": "x", "value": {"stringValue": "a", "intValue": "1"}})
    (turn,) = read_trace(_write(tmp_path, "t.json", otlp([bad])))
    text = "; ".join(turn.problems)
    for key in ("gen_ai.output.messages", "gen_ai.usage.output_tokens",
                "gen_ai.response.id", "arrayValue", "without a string key", "x: not an"):
        assert key in text, text
    assert turn.output_tokens is None and turn.response_id is None


def test_markup_in_a_trace_is_printed_inert(tmp_path, capsys):
    evil = span(1, {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "tool_call", "id": "x\x1b[2J<script>",
                                          "name": "t\u202e", "arguments": "{}"}]}])})
    path = _write(tmp_path, "t.json", otlp([evil]))
    assert main(["trace-check", "--captures", str(DATA), "--trace", str(path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out


def test_cli_usage_errors_and_json(tmp_path, capsys, export):
    assert main(["trace-check", "--captures", str(tmp_path / "none"), "--trace",
                 str(tmp_path)]) == 2
    assert main(["trace-check", "--captures", str(DATA), "--trace", str(export())]) == 0
    capsys.readouterr()
    assert main(["trace-check", "--captures", str(DATA), "--trace",
                 str(export("genai", lambda cs: [{**cs[0], "args": ""}, *cs[1:]])),
                 "--json"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"turn", "call_id", "tool", "wire", "traced", "verdict"} <= rows[0].keys()
    assert [r["verdict"] for r in rows].count("empty") == 1


def _post(receiver, path, body, ctype="application/x-protobuf", **headers):
    conn = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=10)
    conn.request("POST", path, body, {"content-type": ctype, **headers})
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    return resp.status, text


def test_receiver_refuses_what_it_cannot_read():
    doc = json.dumps(otlp([span(1, {"gen_ai.operation.name": "chat"})])).encode()
    with OTLPReceiver() as r:
        assert _post(r, "/v1/traces", doc, "application/json")[0] == 200
        assert _post(r, "/v1/traces", gzip.compress(doc), "application/json",
                     **{"content-encoding": "gzip"})[0] == 200
        assert len(r.turns()) == 1  # the same span twice is one span
        assert _post(r, "/v1/metrics", doc)[0] == 404
        assert _post(r, "/v1/traces", doc, "text/plain")[0] == 415
        assert _post(r, "/v1/traces", doc, "application/json", **{"content-encoding": "br"}
                     )[0] == 415
        assert _post(r, "/v1/traces", b"\xff" * 20)[0] == 400
        assert _post(r, "/v1/traces", b"{" * 1000, "application/json")[0] == 400
        bomb = gzip.compress(b" " * (MAX_BODY + 10))
        assert _post(r, "/v1/traces", bomb, "application/json",
                     **{"content-encoding": "gzip"})[0] == 413
        status, _ = _post(r, "/v1/traces", b"", **{"content-length": str(MAX_BODY + 1)})
        assert status == 413
        assert [s for _, s, _ in r.refusals] == [404, 415, 415, 400, 400, 413]


def test_receiver_binds_loopback_only():
    with pytest.raises(ValueError, match="loopback"):
        OTLPReceiver("0.0.0.0")
