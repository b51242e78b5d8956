"""record: POST, save the bytes exactly with their timing, and never write the key anywhere."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamcalls_lab import load, provenance, timing
from streamcalls_lab.traffic.record import RecordError, auth_header, default_key_env, record
from streamcalls_lab.traffic.serve import SSEServer

from ..conftest import REPO, capture_files
from ..support import turns

KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"  # fake, and unique enough to grep for
ENV = "STREAMCALLS_TEST_KEY"
BODY = turns.anthropic(text=["Hello"], calls=[("lookup", ['{"city": "Par', 'is"}'])])
REQUEST = {"model": "m", "max_tokens": 16, "stream": True, "messages": []}


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, KEY)
    return ENV


def _files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_the_capture_holds_the_response_bytes_exactly(tmp_path: Path, key_env: str) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        rec = record(server.base_url + "/v1/messages", REQUEST, tmp_path / "x.sse",
                     key_env=key_env)
    assert (tmp_path / "x.sse").read_bytes() == BODY
    assert rec.nbytes == len(BODY)


def test_the_timing_sidecar_covers_every_byte_in_order(tmp_path: Path, key_env: str) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        rec = record(server.base_url, REQUEST, tmp_path / "x.sse", key_env=key_env)
    reads = timing.read(rec.path)
    assert reads is not None
    assert sum(n for _, n in reads) == len(BODY)
    assert reads[0][0] == 0.0
    assert len(reads) == rec.nreads


def test_a_recording_loads_like_the_original(tmp_path: Path, key_env: str) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        rec = record(server.base_url, REQUEST, tmp_path / "x.sse", key_env=key_env)
    assert load(rec.path, name="t").drop(columns="t").equals(
        load(BODY, name="t").drop(columns="t"))


def test_the_key_goes_in_the_header_the_auth_mode_names(tmp_path: Path, key_env: str) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        record(server.base_url, REQUEST, tmp_path / "a.sse", key_env=key_env, auth="x-api-key")
        record(server.base_url, REQUEST, tmp_path / "b.sse", key_env=key_env)  # auto: Bearer
    first, second = (r.headers for r in server.requests)
    assert first["x-api-key"] == provenance.fingerprint(KEY)
    assert "authorization" not in first
    assert second["authorization"] == provenance.fingerprint(f"Bearer {KEY}")


def test_auto_auth_follows_the_provider_host() -> None:
    assert auth_header("https://api.anthropic.com/v1/messages") == "x-api-key"
    assert auth_header("https://api.openai.com/v1/responses") == "authorization"
    assert auth_header("https://x.openai.azure.com/openai/v1/chat/completions") == "api-key"
    assert auth_header("https://generativelanguage.googleapis.com/v1beta/x") == "x-goog-api-key"


@pytest.mark.parametrize("url", [
    "https://evilanthropic.com/v1/messages", "https://api.anthropic.com.evil.io/v1/messages",
    "https://notopenai.com/v1/responses", "http://127.0.0.1:8000/v1/messages",
])
def test_a_look_alike_or_unknown_host_gets_no_conventional_key(url: str) -> None:
    assert default_key_env(url) is None
    assert auth_header(url) == "authorization"


def test_a_provider_host_gets_its_conventional_key() -> None:
    assert default_key_env("https://api.anthropic.com/v1/messages") == "ANTHROPIC_API_KEY"
    assert default_key_env("https://API.OpenAI.com./v1/responses") == "OPENAI_API_KEY"


def test_provenance_keeps_the_url_and_status_but_no_credential(
    tmp_path: Path, key_env: str
) -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        rec = record(server.base_url + "/v1/messages?key=" + KEY, REQUEST, tmp_path / "x.sse",
                     key_env=key_env, headers=["anthropic-beta: tools"])
    meta = json.loads(rec.meta.read_text())
    assert meta["status"] == 200
    assert meta["url"].endswith("/v1/messages?key=REDACTED")
    assert meta["request_headers"]["anthropic-beta"] == "tools"
    assert "authorization" not in meta["request_headers"]
    assert KEY not in rec.meta.read_text()


def test_a_missing_key_variable_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="STREAMCALLS_NO_SUCH_VARIABLE"):
        record("http://127.0.0.1:9/", REQUEST, tmp_path / "x.sse",
               key_env="STREAMCALLS_NO_SUCH_VARIABLE")


def test_a_credential_on_the_command_line_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="--key-env") as err:
        record("http://127.0.0.1:9/", REQUEST, tmp_path / "x.sse", key_env=None,
               headers=[f"Authorization: Bearer {KEY}"])
    assert KEY not in str(err.value)


def test_an_http_error_saves_nothing_and_quotes_no_message(tmp_path: Path, key_env: str) -> None:
    # Providers' 401 messages can echo part of the key; only the error type is reported.
    reply = json.dumps({"error": {"type": "authentication_error", "message": f"bad {KEY}"}})
    server = SSEServer(reply.encode(), status=401, content_type="application/json")
    with server, pytest.raises(RecordError, match="HTTP 401 \\(authentication_error\\)") as err:
        record(server.base_url, REQUEST, tmp_path / "x.sse", key_env=key_env)
    assert KEY not in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_server_is_reported_without_the_key(tmp_path: Path, key_env: str) -> None:
    with pytest.raises(RecordError, match="failed") as err:
        record("http://127.0.0.1:9/v1/messages", REQUEST, tmp_path / "x.sse", key_env=key_env)
    assert KEY not in str(err.value)


def test_a_stream_cut_off_midway_is_kept_and_reported(tmp_path: Path, key_env: str) -> None:
    calls = 0

    def crash_on_second_gap(seconds: float) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ConnectionAbortedError("server died")  # the handler stops mid-body

    server = SSEServer(BODY, default_delay=0.01, sleep=crash_on_second_gap, clock=lambda: 0.0)
    with server, pytest.raises(RecordError, match="broke off"):
        record(server.base_url, REQUEST, tmp_path / "x.sse", key_env=key_env)
    saved = (tmp_path / "x.sse").read_bytes()
    assert 0 < len(saved) < len(BODY)
    assert BODY.startswith(saved)


@pytest.mark.captures
def test_cli_records_a_real_capture_and_no_written_file_or_output_holds_the_key(
    tmp_path: Path, captures: Path
) -> None:
    original = capture_files("openai-responses")[0]
    body = tmp_path / "body.json"
    body.write_text(json.dumps(REQUEST))
    out = tmp_path / "rec" / "turn.sse"
    env = {**os.environ, ENV: KEY}
    with SSEServer(original, speed=math.inf) as server:
        done = subprocess.run(
            [sys.executable, "-m", "streamcalls_lab", "record", "--url",
             server.base_url + "/v1/responses", "--body", str(body), "--out", str(out),
             "--key-env", ENV, "--header", "x-trace: 1"],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == original.read_bytes()
    assert server.requests[0].headers["authorization"] == provenance.fingerprint(f"Bearer {KEY}")
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "turn.sse", "turn.sse.meta.json", "turn.sse.request.json", "turn.sse.timing.tsv"]
    assert _files_containing(tmp_path, KEY) == []
    assert KEY not in done.stdout + done.stderr
