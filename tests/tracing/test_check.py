"""trace_check over crafted exports of data/: each verdict from the fault that makes it,
each reader (OTLP JSON, OTLP protobuf, Langfuse) giving the same records."""

from __future__ import annotations

import json

import pytest

from streamcalls_lab.tracing import VERDICTS, read_trace, trace_check

from .conftest import DATA, target


@pytest.mark.parametrize("style", ["genai", "completion", "openinference"])
def test_faithful_export_is_ok_in_every_convention(export, wire, style):
    table = trace_check(DATA, export(style))
    assert len(table) == sum(len(w.calls) for w in wire)
    assert set(table["verdict"]) == {"ok"}, table[["verdict", "note"]]
    assert table.attrs["passed"] and not table.attrs["unmatched_traces"]
    # matched by response id where the convention keeps one, else by call ids
    assert set(table["matched_by"]) == ({"call ids"} if style == "openinference"
                                        else {"response id"})


def _faulted(table, wire):
    return table[table["turn"] == wire[target(wire)].turn]


def _first(table, wire):
    return _faulted(table, wire).iloc[0]


FAULTS = {
    "empty": lambda cs: [{**cs[0], "args": ""}, *cs[1:]],
    "truncated": lambda cs: [{**cs[0], "args": cs[0]["args"][:9]}, *cs[1:]],
    "mangled": lambda cs: [{**cs[0], "args": cs[0]["args"].replace("A", "B", 1)}, *cs[1:]],
    "wrong_name": lambda cs: [{**cs[0], "name": cs[0]["name"] + "x"}, *cs[1:]],
    "wrong_id": lambda cs: [{**cs[0], "id": "call_other"}, *cs[1:]],
    "split": lambda cs: [{**cs[0], "args": cs[0]["args"][:5]},
                         {**cs[0], "args": cs[0]["args"][5:]}, *cs[1:]],
    "reserialised": lambda cs: [{**cs[0], "args": json.dumps(json.loads(cs[0]["args"]),
                                                             indent=1)}, *cs[1:]],
}


@pytest.mark.parametrize("verdict", sorted(FAULTS))
def test_each_fault_gets_its_verdict(export, wire, verdict):
    table = trace_check(DATA, export("genai", FAULTS[verdict]))
    assert _first(table, wire)["verdict"] == verdict
    assert (table["verdict"] == "ok").sum() == len(table) - 1
    assert table.attrs["passed"] == VERDICTS[verdict].passes


def test_merged_and_missing(export, wire):
    two = next(n for n, w in enumerate(wire) if len(w.calls) == 2)
    merged = trace_check(DATA, export("genai", lambda cs: [
        {**cs[0], "args": cs[0]["args"] + cs[1]["args"]}], at=two))
    missing = trace_check(DATA, export("genai", lambda cs: cs[:1], at=two))
    turn = wire[two].turn
    assert merged[merged["turn"] == turn]["verdict"].tolist() == ["merged", "missing"]
    assert missing[missing["turn"] == turn]["verdict"].tolist() == ["ok", "missing"]


def test_content_only_trace_is_missing_and_listed(export, wire):
    """The Langfuse #12490 class: the span keeps the text, not the calls. Nothing pairs the
    turn by id or tools, so its calls are missing and the span is listed unmatched."""
    table = trace_check(DATA, export("genai", lambda cs: []))
    assert _first(table, wire)["verdict"] == "missing"
    assert len(table.attrs["unmatched_traces"]) == 0  # paired by response id: listed in-row
    assert not table.attrs["passed"]


def test_unmatched_on_both_sides_are_listed(tmp_path, export, wire):
    path = export("openinference", lambda cs: [{**c, "id": c["id"] + "?"} for c in cs],
                  **{"llm.token_count.completion": 7})
    table = trace_check(DATA, path)
    assert len(table) == sum(len(w.calls) for w in wire)  # no wire call dropped
    # a turn whose ids are wrong and whose tools others share: listed, never guessed
    row = _first(table, wire)
    assert row["verdict"] in ("missing", "wrong_id")
    if row["verdict"] == "missing":
        assert table.attrs["unmatched_traces"]


def test_protobuf_and_langfuse_readers_agree_with_json(tmp_path, export):
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    path = export("genai", FAULTS["truncated"])
    doc = json.loads(path.read_text())
    for rs in doc["resourceSpans"]:  # protobuf's JSON mapping writes ids as base64
        for sp in rs["scopeSpans"][0]["spans"]:
            for k in ("traceId", "spanId"):
                import base64
                sp[k] = base64.b64encode(bytes.fromhex(sp[k])).decode()
    pb = tmp_path / "trace.pb"
    pb.write_bytes(ParseDict(doc, ExportTraceServiceRequest()).SerializeToString())
    a, b = trace_check(DATA, path), trace_check(DATA, pb)
    assert a["verdict"].tolist() == b["verdict"].tolist()
    assert [(t.response_id, [c.args for c in t.calls]) for t in read_trace(path)] == [
        (t.response_id, [c.args for c in t.calls]) for t in read_trace(pb)]


def test_langfuse_export(tmp_path, wire):
    obs = []
    for n, w in enumerate(wire):
        calls = [{"id": c.call_id, "type": "function",
                  "function": {"name": c.tool, "arguments": c.args}} for c in w.calls]
        output = ({"role": "assistant", "content": "ok"} if n == 0  # #12490: text only
                  else {"role": "assistant", "content": None, "tool_calls": calls})
        obs.append({"id": f"o{n}", "traceId": f"t{n}", "type": "GENERATION",
                    "startTime": "2026-01-01T00:00:00Z",
                    "completionStartTime": "2026-01-01T00:00:00.250Z",
                    "output": output, "usageDetails": {"input": 3, "output": 5}})
    path = tmp_path / "langfuse.jsonl"
    path.write_text("\n".join(json.dumps({"data": [o]}) for o in obs))
    table = trace_check(DATA, path)
    assert (table["verdict"].iloc[len(wire[0].calls):] == "ok").all()
    assert set(table["verdict"].iloc[:len(wire[0].calls)]) == {"missing"}
    assert table["traced_first_chunk"].dropna().eq(0.25).all()
    assert table.attrs["unmatched_traces"][0]["span"].endswith("observation o0")
