"""serve: a real loopback HTTP server, read by the official SDK clients over real sockets."""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from streamcalls_lab import calls, provenance, timing
from streamcalls_lab.traffic.serve import SSEServer, serve

from ..conftest import CAPTURES
from ..support import turns
from ..support.eventstream_turns import event
from ..support.wire_samples import ndjson, ollama_call, ollama_line, ollama_turn

if TYPE_CHECKING:
    import openai

BODY = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"q"', ': "x"}'])])
TIMEOUT = 20  # seconds: no request here should come near it
USER = [{"role": "user", "content": "x"}]
PER_FORMAT = 4


def _get(url: str, method: str = "POST", **kw: Any) -> httpx2.Response:
    with httpx2.Client(timeout=TIMEOUT) as client:
        return client.request(method, url, **kw)


def test_streams_the_capture_byte_exact_as_an_event_stream() -> None:
    with serve(BODY, speed=math.inf) as base_url:
        resp = _get(base_url + "/v1/messages", json={"stream": True})
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "text/event-stream"
    assert resp.content == BODY


@pytest.mark.parametrize(("suffix", "body", "content_type"), [
    (".eventstream", event("messageStart", '{"role": "assistant"}') + event("messageStop", "{}"),
     "application/vnd.amazon.eventstream"),
    (".ndjson", ndjson(*ollama_turn()), "application/x-ndjson"),  # not text/event-stream
], ids=["aws-event-stream", "ndjson"])
def test_a_capture_of_another_framing_is_served_under_its_content_type(
    suffix: str, body: bytes, content_type: str, tmp_path: Path
) -> None:
    (tmp_path / f"x{suffix}").write_bytes(body)
    for source in (body, tmp_path / f"x{suffix}"):
        with serve(source, speed=math.inf) as base_url:
            resp = _get(base_url + "/model/m/converse-stream")
        assert resp.headers["content-type"] == content_type
        assert resp.content == body


def test_the_ollama_sdk_reads_a_served_ndjson_capture_as_load_does() -> None:
    ollama = pytest.importorskip("ollama")

    body = ndjson(ollama_line("Hi"), ollama_line(tool_calls=[ollama_call("f", {"n": 1})]),
                  ollama_line(done=True))
    with serve(body, speed=math.inf) as base_url:
        parts = list(ollama.Client(host=base_url, timeout=TIMEOUT).chat(
            model="m", messages=USER, stream=True))
    assert "".join(p.message.content or "" for p in parts) == "Hi"
    assert [(tc.function.name, dict(tc.function.arguments))
            for p in parts for tc in p.message.tool_calls or []] == [("f", {"n": 1})]


def test_any_path_and_get_are_answered() -> None:
    with serve(BODY, speed=math.inf) as base_url:
        assert _get(base_url + "/v1/responses").content == BODY
        assert _get(base_url + "/anything", method="GET").content == BODY


def test_only_loopback_addresses_are_accepted() -> None:
    with pytest.raises(ValueError, match="loopback"):
        SSEServer(BODY, host="0.0.0.0")


def test_the_base_url_is_on_loopback() -> None:
    with serve(BODY) as base_url:
        assert base_url.startswith("http://127.0.0.1:")


def test_several_captures_are_served_in_turn(tmp_path: Path) -> None:
    other = turns.chat([(0, "call_b", "other", ["{}"])])
    (tmp_path / "a.sse").write_bytes(BODY)
    (tmp_path / "b.sse").write_bytes(other)
    with serve(tmp_path, speed=math.inf) as base_url:
        got = [_get(base_url).content for _ in range(3)]
    assert got == [BODY, other, BODY]


def test_reads_go_out_at_the_recorded_pace_scaled_by_speed(tmp_path: Path) -> None:
    path = tmp_path / "timed.sse"
    path.write_bytes(BODY)
    timing.write(path, [(0.0, 10), (0.4, 20), (1.0, len(BODY) - 30)])
    sleeps: list[float] = []
    # A clock that stands still: each wait is then exactly the scheduled gap.
    with SSEServer(path, speed=2.0, sleep=sleeps.append, clock=lambda: 0.0) as server:
        assert _get(server.base_url).content == BODY
    assert sleeps == pytest.approx([0.2, 0.5])  # due at 0.2 and 0.5 from the start


def test_a_status_other_than_200_can_be_served() -> None:
    with serve(b'{"type":"error"}', status=529) as base_url:
        assert _get(base_url).status_code == 529


def test_credentials_are_remembered_only_as_fingerprints() -> None:
    with SSEServer(BODY, speed=math.inf) as server:
        _get(server.base_url, headers={"x-api-key": "sk-test-secret-1234", "x-other": "plain"})
    seen = server.requests[0].headers
    assert seen["x-api-key"] == provenance.fingerprint("sk-test-secret-1234")
    assert seen["x-other"] == "plain"
    assert "sk-test-secret-1234" not in repr(server.requests)


# -- the official SDKs against real captures ------------------------------------------------
def _sample(fmt: str) -> list[Path]:
    """Captures of client tool calls (no server tools, nothing of doubtful origin), one per
    origin repository, the one with the most calls."""
    index = CAPTURES / "INDEX.tsv"
    if not index.exists():
        return []
    with index.open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t")
                if r["provider_format"] == fmt and r["container"] == "raw-sse"
                and r["has_tool_calls"] == "y" and "UNCERTAIN" not in r["notes"]
                and ("call kinds=" not in r["notes"] or "call kinds=function_call |"
                     in r["notes"] + " |")]
    best: dict[str, dict[str, str]] = {}  # one per origin repository: the most calls
    for r in sorted(rows, key=lambda r: (-int(r["n_tool_calls"] or 0), r["file"])):
        best.setdefault(r["origin_repo"], r)
    return [CAPTURES / best[repo]["file"] for repo in sorted(best)][:PER_FORMAT]


def _anthropic(base_url: str) -> list[tuple[int, str, str, str]]:
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-fake", base_url=base_url, max_retries=0,
                                 timeout=TIMEOUT)
    with client, client.messages.stream(model="m", max_tokens=1, messages=USER) as stream:
        for _ in stream:
            pass
        message = stream.get_final_message()
        # The snapshot holds only the parsed input; the raw deltas live in this private buffer.
        raw: dict[int, bytes] = stream._MessageStream__json_bufs
    return [(i, b.id, b.name, raw.get(i, b"").decode()) for i, b in enumerate(message.content)
            if b.type == "tool_use"]


def _openai(base_url: str) -> openai.OpenAI:
    import openai

    return openai.OpenAI(api_key="sk-fake", base_url=base_url + "/v1", max_retries=0,
                         timeout=TIMEOUT)


def _chat(base_url: str) -> list[tuple[int, str, str, str]]:
    with (client := _openai(base_url)), client.chat.completions.stream(
        model="m", messages=USER
    ) as stream:
        for _ in stream:
            pass
        snapshot = stream.current_completion_snapshot
    message = next(c for c in snapshot.choices if c.index == 0).message
    return [(tc.index, tc.id, tc.function.name, tc.function.arguments or "")
            for tc in message.tool_calls or []]


def _responses(base_url: str) -> list[tuple[int, str, str, str]]:
    with (client := _openai(base_url)), client.responses.stream(model="m", input="x") as stream:
        for _ in stream:
            pass
        # Items as the SDK grew them from the events, by output_index: some servers (Codex)
        # leave the final response's output empty.
        items = stream._state._output_items
    return [(i, item.call_id, item.name, item.arguments) for i, item in sorted(items.items())
            if item.type == "function_call"]


SDKS = {"anthropic-messages": _anthropic, "openai-chat": _chat, "openai-responses": _responses}


@pytest.mark.captures
@pytest.mark.parametrize("fmt", list(SDKS))
def test_sdk_clients_assemble_the_same_calls_as_calls(fmt: str, captures: Path) -> None:
    sample = _sample(fmt)
    assert len(sample) >= 2
    for path in sample:
        ours = calls(path)
        expected = [(int(r.block), r.call_id, r.tool, r.args) for r in ours.itertuples()]
        with SSEServer(path, speed=math.inf) as server, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic chatter about unknown item types
            got = SDKS[fmt](server.base_url)
        assert got, f"{path.name}: the SDK assembled no call"
        assert got == expected, path.name
