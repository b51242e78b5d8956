"""AI SDK DevTools generations.json and claude-trace logs: what each kept, imported honestly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamcalls_lab import CaptureError, calls, load, provenance
from streamcalls_lab.importers import import_file, streams

from ..support import turns

CHAT = turns.chat([(0, "call_a", "lookup", ['{"city": "Par', 'is"}']),
                   (1, "call_b", "search", ['{"q"', ": 1}"])])
KEY = "sk-devtools-secret-key-0123456789"


def _chunks(body: bytes) -> list[Any]:
    frames = load(body, raw=True).drop_duplicates("frame")
    return [json.loads(d) for d in frames["data"] if d and d.startswith("{")]


def _parts(cut: bool = False) -> list[dict[str, Any]]:
    """The AI SDK stream parts (LanguageModelV3StreamPart) of CHAT's two calls."""
    parts: list[dict[str, Any]] = [{"type": "stream-start", "warnings": []},
                                   {"type": "response-metadata", "id": "r", "modelId": "m"}]
    for cid, tool, frags in (("call_a", "lookup", ['{"city": "Par', 'is"}']),
                             ("call_b", "search", ['{"q"', ": 1}"])):
        parts.append({"type": "tool-input-start", "id": cid, "toolName": tool})
        parts += [{"type": "tool-input-delta", "id": cid, "delta": f} for f in frags]
        parts.append({"type": "tool-input-end", "id": cid})
        parts.append({"type": "tool-call", "toolCallId": cid, "toolName": tool,
                      "input": "".join(frags)})
    parts.append({"type": "finish", "finishReason": {"unified": "tool-calls", "raw": "x"},
                  "usage": {}})
    if cut:  # aborted inside the second call's arguments
        end = next(i for i, p in enumerate(parts) if p.get("delta") == ": 1}")
        parts = parts[:end]
    return parts


def _step(parts: list[dict[str, Any]], chunks: list[Any], error: str | None = None,
          kind: str = "stream") -> dict[str, Any]:
    return {"id": "s1", "run_id": "r1", "step_number": 1, "type": kind,
            "model_id": "gpt-x", "provider": "openai.chat", "started_at": "2026-01-01T00:00:00Z",
            "duration_ms": 812, "input": json.dumps({"prompt": []}), "output": None,
            "usage": None, "error": error,
            "raw_request": json.dumps({"model": "gpt-x", "api_key": KEY}),
            "raw_response": json.dumps(parts), "raw_chunks": json.dumps(chunks),
            "provider_options": None}


def _generations(tmp_path: Path, *steps: dict[str, Any]) -> Path:
    folder = tmp_path / ".devtools"
    folder.mkdir(exist_ok=True)
    path = folder / "generations.json"
    path.write_text(json.dumps({"runs": [{"id": "r1", "started_at": "x"}],
                                "steps": list(steps)}, indent=2))
    return path


def test_a_streamed_step_is_two_captures_of_one_turn_with_the_same_calls(
    tmp_path: Path,
) -> None:
    path = _generations(tmp_path, _step(_parts(), _chunks(CHAT)),
                        _step([], [], kind="generate"))
    raw, parts = import_file(path, tmp_path / "out")
    assert (raw.name, parts.name) == ("generations__s0_raw.sse", "generations__s0_parts.sse")
    cols = ["tool", "args", "complete"]
    want = calls(CHAT)[cols]
    assert calls(raw)[cols].equals(want)
    assert calls(parts)[cols].equals(want)
    assert set(load(parts)["provider"].astype(str)) == {"ai-sdk-ui"}
    meta = provenance.read(parts) or {}
    assert meta["parts_not_written"] == {"stream-start": 1, "response-metadata": 1,
                                         "tool-input-end": 2}
    assert meta["duration_ms"] == 812 and "rebuilt" in meta


def test_load_reads_generations_json_by_its_name_and_marks_both_rebuilt(tmp_path: Path) -> None:
    df = load(_generations(tmp_path, _step(_parts(), _chunks(CHAT))))
    assert set(df.attrs["rebuilt"]) == {"generations__s0_raw", "generations__s0_parts"}


def test_an_aborted_step_keeps_its_cut_call_cut(tmp_path: Path) -> None:
    path = _generations(tmp_path, _step(_parts(cut=True), _chunks(CHAT)[:-2],
                                        error="Request aborted"))
    _, parts = import_file(path, tmp_path / "out")
    got = calls(load(parts, strict=False))
    assert got["complete"].tolist() == [True, False]
    assert got["args"].tolist() == ['{"city": "Paris"}', '{"q"']
    df = load(parts, strict=False)
    assert "Request aborted" in df["problem"].iloc[-1]
    assert b"[DONE]" not in parts.read_bytes()


def test_a_key_in_the_request_body_is_never_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_file(_generations(tmp_path, _step(_parts(), _chunks(CHAT))), out)
    assert not [p for p in out.iterdir() if KEY.encode() in p.read_bytes()]


def test_raw_chunks_that_are_not_json_name_the_step(tmp_path: Path) -> None:
    step = _step(_parts(), [])
    step["raw_chunks"] = '[{"id": "chatcmpl'
    with pytest.raises(CaptureError, match=r"steps\[0\]: byte 0: raw_chunks is not JSON"):
        list(streams(_generations(tmp_path, step)))


def test_a_devtools_file_cut_short_is_an_error_at_its_byte(tmp_path: Path) -> None:
    path = _generations(tmp_path, _step(_parts(), _chunks(CHAT)))
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(CaptureError, match=r"generations.json: byte \d+: not JSON"):
        list(streams(path))


# -- claude-trace ---------------------------------------------------------------------------
ANTHROPIC = turns.anthropic(text=["Hi"], calls=[("lookup", ['{"city": "Par', 'is"}'])])
TOKEN = "sk-ant-oat01-trace-secret-token-value"


def _pair(body_raw: str | None, *, body: Any = None) -> dict[str, Any]:
    response: dict[str, Any] = {"timestamp": 2.0, "status_code": 200,
                                "headers": {"content-type": "text/event-stream",
                                            "request-id": "req_1"}}
    if body_raw is not None:
        response["body_raw"] = body_raw
    else:
        response["body"] = body
    return {"request": {"timestamp": 1.0, "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages?beta=true",
                        "headers": {"authorization": f"Bearer {TOKEN}",
                                    "content-type": "application/json"},
                        "body": {"model": "claude-x", "messages": []}},
            "response": response, "logged_at": "2026-01-01T00:00:00Z"}


def _trace(tmp_path: Path, *pairs: dict[str, Any]) -> Path:
    folder = tmp_path / ".claude-trace"
    folder.mkdir(exist_ok=True)
    path = folder / "log-2026-01-01-00-00-00.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path


def test_claude_trace_body_raw_is_imported_and_says_it_may_not_be_byte_exact(
    tmp_path: Path,
) -> None:
    echo = ANTHROPIC.replace(b'"Hi"', json.dumps(TOKEN).encode())  # a server echoing it back
    path = _trace(tmp_path, _pair(None, body={"ok": 1}), _pair(ANTHROPIC.decode()),
                  _pair(echo.decode()))
    written = import_file(path, tmp_path / "out")
    assert [p.name for p in written] == ["log-2026-01-01-00-00-00__l2.sse",
                                         "log-2026-01-01-00-00-00__l3.sse"]
    assert written[0].read_bytes() == ANTHROPIC
    meta = provenance.read(written[0]) or {}
    assert "not guaranteed byte-exact" in meta["note"]
    assert set(meta["request_headers"]) == {"content-type"}
    assert not [p for p in (tmp_path / "out").iterdir() if TOKEN.encode() in p.read_bytes()]
    assert calls(load(path))["args"].tolist() == ['{"city": "Paris"}'] * 2


def test_a_claude_trace_line_cut_short_names_its_line_and_byte(tmp_path: Path) -> None:
    path = _trace(tmp_path, _pair(ANTHROPIC.decode()), _pair(ANTHROPIC.decode()))
    raw = path.read_bytes()
    first = raw.index(b"\n") + 1
    path.write_bytes(raw[: first + 40])
    with pytest.raises(CaptureError, match=rf"byte {first}: line 2 is not JSON"):
        list(streams(path))
