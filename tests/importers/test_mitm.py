"""mitmproxy flow files, written by mitmproxy's own FlowWriter, imported through its FlowReader."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from streamcalls_lab import CaptureError, calls, load, provenance
from streamcalls_lab.importers import import_file, streams

from ..support import turns

mitm_http = pytest.importorskip("mitmproxy.http")
mitm_io = pytest.importorskip("mitmproxy.io")
tflow = pytest.importorskip("mitmproxy.test.tflow")

BODY = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"city": "Par', 'is"}'])])
TOKEN = "sk-ant-api03-mitm-secret-value-0123"


def _flow(body: bytes | None, ctype: str = "text/event-stream", *, gzipped: bool = False):
    flow = tflow.tflow(resp=True)
    flow.request = mitm_http.Request.make(
        "POST", "https://api.anthropic.com/v1/messages?beta=true",
        b'{"model": "claude-x", "stream": true}',
        {"x-api-key": TOKEN, "content-type": "application/json"})
    flow.response = mitm_http.Response.make(200, body or b"", {"content-type": ctype,
                                                               "request-id": "req_9"})
    if gzipped:
        flow.response.encode("gzip")
    if body is None:  # what mitmproxy keeps of a response it streamed
        flow.response.raw_content = None
    return flow


def _write(tmp_path: Path, *flows, name: str = "session.mitm") -> Path:
    path = tmp_path / name
    with path.open("wb") as f:
        writer = mitm_io.FlowWriter(f)
        for flow in flows:
            writer.add(flow)
    return path


def test_event_stream_flows_become_byte_exact_captures_without_credentials(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, _flow(b'{"ok": 1}', "application/json"), _flow(BODY),
                  _flow(BODY, gzipped=True))
    written = import_file(path, tmp_path / "out")
    assert [p.name for p in written] == ["session__f1.sse", "session__f2.sse"]
    assert all(p.read_bytes() == BODY for p in written)
    meta = provenance.read(written[1]) or {}
    assert meta["source"] == "mitmproxy" and meta["decoded_from"] == "gzip"
    assert "x-api-key" not in meta["request_headers"] and "rebuilt" not in meta
    assert not [p for p in (tmp_path / "out").iterdir() if TOKEN.encode() in p.read_bytes()]


def test_load_reads_a_flow_file_directly(tmp_path: Path) -> None:
    df = load(_write(tmp_path, _flow(BODY), name="dump.flow"))
    assert df["turn"].unique().tolist() == ["dump__f0"]
    assert calls(df)["args"].tolist() == ['{"city": "Paris"}']
    assert "rebuilt" not in df.attrs  # bytes as received


def test_a_streamed_flow_whose_body_mitmproxy_did_not_keep_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, _flow(BODY), _flow(None))
    with pytest.raises(CaptureError, match=r"flow 1 .*kept no body"):
        import_file(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_truncated_flow_file_names_the_byte_where_the_bad_flow_starts(tmp_path: Path) -> None:
    flow = _flow(BODY)
    path = _write(tmp_path, flow, flow)
    one = len(_write(tmp_path, flow, name="one.mitm").read_bytes())
    path.write_bytes(path.read_bytes()[:-50])
    with pytest.raises(CaptureError, match=rf"session.mitm: byte {one}: flow 1 cannot be read"):
        list(streams(path))


@pytest.mark.parametrize("text", [b'{"log": {"entries": []}}', b"\xef\xbb\xbf{}", b"\x00junk"])
def test_a_file_that_is_no_flow_dump_is_not_read_as_one(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "x.flow"
    path.write_bytes(text)
    with pytest.raises(CaptureError, match=r"x\.flow: byte 0"):
        list(streams(path))


def test_a_gzip_body_cut_short_is_an_error_not_half_a_body(tmp_path: Path) -> None:
    flow = _flow(BODY)
    flow.response.headers["content-encoding"] = "gzip"
    flow.response.raw_content = gzip.compress(BODY)[:-12]
    with pytest.raises(CaptureError, match="flow 0: body cannot be decoded"):
        list(streams(_write(tmp_path, flow)))
