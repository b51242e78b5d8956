"""What a proxy or `record` capture says beyond its bytes: the request it answered (tools and
messages, never a credential) and how long after that request its first byte came, which
`stats.time_to_first_chunk` adds to the first chunk's time as OpenTelemetry counts it."""

from __future__ import annotations

import base64
import http.client
import json
import math
import warnings
from pathlib import Path

import pandas as pd

from streamcalls_lab import load, provenance, stats
from streamcalls_lab.generate import generate
from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.record import record
from streamcalls_lab.traffic.serve import SSEServer

KEY = "sk-requestkept-7d3e9f1a2b4c"  # fake, unique enough to grep for
BODY_KEY = "bodykey-5a6b7c8d9e0f"
CALL = [("lookup", {"city": "Paris"})]
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


def _no_secret_on_disk(root: Path, *secrets: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for s in secrets:
                for form in (s, base64.b64encode(s.encode()).decode(), json.dumps(s)[1:-1]):
                    assert form.encode() not in data, f"{s} ({form}) written to {path.name}"


def _only(root: Path, suffix: str = ".sse") -> Path:
    (capture,) = [p for p in root.rglob(f"*{suffix}") if p.is_file()]
    return capture


def test_the_proxy_keeps_the_request_beside_the_capture_without_its_key(tmp_path: Path) -> None:
    import openai

    turn = generate(CALL, provider="openai-chat", seed=1)
    with SSEServer(turn.body, speed=math.inf) as upstream, \
            RecordingProxy(upstream.base_url, tmp_path) as proxy, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = openai.OpenAI(base_url=f"{proxy.base_url}/v1", api_key=KEY, max_retries=0)
        with client.chat.completions.stream(
                model="gpt-test", tools=TOOLS,
                messages=[{"role": "user", "content": f"my key is {KEY}, look up Paris"}],
                extra_body={"api_key": BODY_KEY}) as stream:
            stream.until_done()
    capture = _only(tmp_path)
    kept = json.loads(provenance.request_sidecar(capture).read_text("utf-8"))
    assert kept["model"] == "gpt-test" and kept["tools"] == TOOLS
    assert kept["api_key"] == provenance.REDACTED
    assert "look up Paris" in kept["messages"][0]["content"]
    _no_secret_on_disk(tmp_path, KEY, BODY_KEY)
    meta = provenance.read(capture)
    assert meta is not None and "request_not_kept" not in meta
    wait = meta["request_to_first_byte"]
    assert isinstance(wait, float) and wait >= 0
    # the folder still loads as the one capture it holds: the sidecar is no capture
    assert load(tmp_path)["turn"].nunique() == 1


def test_time_to_first_chunk_counts_from_the_request(tmp_path: Path) -> None:
    turn = generate(CALL, provider="openai-chat", before="Let me look.", seed=3)
    with SSEServer(turn.body, speed=math.inf) as upstream, \
            RecordingProxy(upstream.base_url, tmp_path) as proxy:
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
        conn.request("POST", "/v1/chat/completions",
                     body=json.dumps({"model": "m", "stream": True}),
                     headers={"content-type": "application/json"})
        conn.getresponse().read()
        conn.close()
    deltas = load(tmp_path)
    got = stats.time_to_first_chunk(deltas, tmp_path).iloc[0]
    meta = provenance.read(_only(tmp_path))
    assert meta is not None
    assert got["request_to_first_byte"] == meta["request_to_first_byte"]
    first = deltas[deltas["kind"].isin(stats.CHUNK_KINDS) & (deltas["chars"] > 0)]["t"].min()
    assert got["t_first_chunk"] == first
    assert got["time_to_first_chunk"] == first + meta["request_to_first_byte"]


def test_record_keeps_the_request_and_its_wait(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STREAMCALLS_TEST_KEY", KEY)
    turn = generate(CALL, provider="openai-chat", seed=4)
    body = {"model": "m", "stream": True, "tools": TOOLS, "messages": [], "key": BODY_KEY}
    with SSEServer(turn.body, speed=math.inf) as upstream:
        got = record(f"{upstream.base_url}/v1/chat/completions", body,
                     tmp_path / "t.sse", key_env="STREAMCALLS_TEST_KEY")
    kept = json.loads(provenance.request_sidecar(got.path).read_text("utf-8"))
    assert kept["tools"] == TOOLS and kept["key"] == provenance.REDACTED
    meta = provenance.read(got.path)
    assert meta is not None and meta["request_to_first_byte"] >= 0
    _no_secret_on_disk(tmp_path, KEY, BODY_KEY)


def test_a_request_that_cannot_be_kept_says_why(tmp_path: Path) -> None:
    out = tmp_path / "t.sse"
    assert provenance.write_request(out, b"", []) == "the request had no body"
    assert provenance.write_request(out, b"a=1&b=2", []) == "the request body is not JSON"
    big = b'{"x": "' + b"a" * provenance.MAX_REQUEST_BYTES + b'"}'
    assert "larger than" in (provenance.write_request(out, big, []) or "")
    assert not provenance.request_sidecar(out).exists()


def test_a_secret_in_any_spelling_is_scrubbed_from_the_kept_request(tmp_path: Path) -> None:
    out = tmp_path / "t.sse"
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)  # every character as an escape
    body = ('{"messages": [{"content": "' + escaped + '"}, {"content": "'
            + base64.b64encode(KEY.encode()).decode() + '"}]}').encode()
    assert provenance.write_request(out, body, [KEY]) is None
    _no_secret_on_disk(tmp_path, KEY)


def test_without_a_recorded_wait_the_time_from_the_request_is_unknown(tmp_path: Path) -> None:
    turn = generate(CALL, provider="anthropic-messages", seed=5)
    (tmp_path / "a.sse").write_bytes(turn.body)
    got = stats.time_to_first_chunk(load(tmp_path), tmp_path)
    assert list(got["turn"]) == ["a"]
    assert got[["request_to_first_byte", "time_to_first_chunk"]].isna().all().all()
    assert pd.isna(got["t_first_chunk"].iloc[0])  # no timing sidecar either
