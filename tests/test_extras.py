"""What the big three send beyond plain function calls: Responses custom and MCP tool input,
Anthropic server tools, their result blocks and fine-grained tool streaming, and Chat
Completions' legacy ``function_call``."""

from __future__ import annotations

import json

import pytest

import streamcalls_lab as scl

from .conftest import CAPTURES
from .support.sse_turns import START, anthropic, chat, responses
from .support.wire_samples import assert_chunking_changes_nothing

# -- OpenAI Responses: custom tools (free text) and MCP calls --------------------------------

HTML = ["<main>", "<h1>Hi", "</h1>", "</main>"]


def custom_tool(fragments: list[str] = HTML, *, done: bool = True) -> bytes:
    item = {"id": "ctc_1", "type": "custom_tool_call", "status": "in_progress",
            "call_id": "call_c1", "input": "", "name": "setHtml"}
    events = [{"type": "response.created", "response": {"id": "resp_1"}},
              {"type": "response.output_item.added", "output_index": 0, "item": item}]
    events += [{"type": "response.custom_tool_call_input.delta", "output_index": 0,
                "item_id": "ctc_1", "delta": f} for f in fragments]
    if done:
        whole = "".join(fragments)
        events += [{"type": "response.custom_tool_call_input.done", "output_index": 0,
                    "item_id": "ctc_1", "input": whole},
                   {"type": "response.output_item.done", "output_index": 0,
                    "item": {**item, "status": "completed", "input": whole}},
                   {"type": "response.completed", "response": {"id": "resp_1"}}]
    return responses(*events)


def mcp_call(fragments: list[str]) -> bytes:
    item = {"id": "mcp_1", "type": "mcp_call", "status": "in_progress", "arguments": "",
            "name": "web_search_exa", "server_label": "dmcp", "output": None, "error": None}
    whole = "".join(fragments)
    return responses(
        {"type": "response.output_item.added", "output_index": 2, "item": item},
        {"type": "response.mcp_call.in_progress", "output_index": 2, "item_id": "mcp_1"},
        *({"type": "response.mcp_call_arguments.delta", "output_index": 2, "item_id": "mcp_1",
           "delta": f} for f in fragments),
        {"type": "response.mcp_call_arguments.done", "output_index": 2, "item_id": "mcp_1",
         "arguments": whole},
        {"type": "response.mcp_call.completed", "output_index": 2, "item_id": "mcp_1"},
        {"type": "response.output_item.done", "output_index": 2,
         "item": {**item, "status": "completed", "arguments": whole, "output": "[]"}},
    )


def test_custom_tool_input_deltas_are_argument_fragments() -> None:
    df = scl.load(custom_tool())
    assert df[df.kind == "args_delta"].fragment.tolist() == HTML


def test_a_custom_tool_call_is_whole_and_says_its_input_is_text() -> None:
    out = scl.calls(custom_tool()).iloc[0]
    assert (out.call_id, out.tool, out.args, out.complete) == (
        "call_c1", "setHtml", "".join(HTML), True)
    assert (out.args_format, out.valid_json, out.final_matches) == ("text", False, True)


def test_function_calls_say_their_input_is_json() -> None:
    body = responses(
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}})
    assert scl.calls(body).args_format.tolist() == ["json"]


def test_a_custom_tool_call_cut_off_is_not_complete() -> None:
    assert not scl.calls(custom_tool(done=False)).complete.any()


def test_mcp_call_arguments_are_a_call_named_by_its_item_id() -> None:
    out = scl.calls(mcp_call(['{"query":', ' "x"}'])).iloc[0]
    assert (out.block, out.call_id, out.tool, out.args) == (2, "mcp_1", "web_search_exa",
                                                             '{"query": "x"}')
    assert out.complete and out.valid_json and out.final_matches


def test_a_done_that_disagrees_with_the_fragments_is_reported() -> None:
    body = custom_tool().replace(b'"input": "<main><h1>Hi</h1></main>"', b'"input": "x"', 1)
    assert "differ from the fragments" in scl.calls(body).problem.iloc[0]


def test_the_openai_sdk_reads_the_same_custom_input_as_its_done_item() -> None:
    """The SDK keeps no buffer for custom input deltas: the reference is the stream's own
    ``output_item.done`` item, as the SDK parses it from the same bytes (no network)."""
    from .support.sdk_reference import _openai_client

    client = _openai_client(custom_tool())
    done = []
    with client, client.responses.stream(model="reference", input="x") as stream:
        for event in stream:
            if event.type == "response.output_item.done" and \
                    event.item.type == "custom_tool_call":
                done.append((event.item.call_id, event.item.name, event.item.input))
    out = scl.calls(custom_tool())
    assert done and list(zip(out.call_id, out.tool, out.args, strict=True)) == done


REAL_RESPONSES = sorted((CAPTURES / "openai-responses").glob("vercel__ai__openai-*.jsonl"))


@pytest.mark.captures
@pytest.mark.skipif(not REAL_RESPONSES, reason="real Responses chunk logs not found")
@pytest.mark.parametrize("name", ["openai-custom-text-tool.1", "openai-mcp-tool.1"])
def test_real_custom_and_mcp_events_reframed_agree_with_their_done_events(name: str) -> None:
    """The AI SDK's real event logs, re-framed as SSE: every custom and MCP call's
    fragments equal what its own done event repeats."""
    path = CAPTURES / "openai-responses" / f"vercel__ai__{name}.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} not found")
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = scl.calls(responses(*events))
    special = out[out.call_id.str.startswith(("mcp_", "call_")) & out.complete]
    assert len(special) and special.final_matches.all()


# -- Anthropic: server tools, result blocks, fine-grained streaming ---------------------------

def block_start(index: int, block: dict) -> dict:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, text: str) -> dict:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": text}}


def stop(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


SEARCH = anthropic(
    START,
    block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                    "input": {}}),
    delta(0, ""), delta(0, '{"query": "weather'), delta(0, ' Paris"}'), stop(0),
    block_start(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                    "content": [{"type": "web_search_result", "url": "https://x.test",
                                 "title": "x", "encrypted_content": "abc"}]}),
    stop(1),
    {"type": "message_stop"},
)


def test_a_server_tool_use_is_a_call() -> None:
    out = scl.calls(SEARCH)
    assert list(zip(out.call_id, out.tool, out.args, out.complete, strict=True)) == [
        ("srvtoolu_1", "web_search", '{"query": "weather Paris"}', True)]


def test_a_result_block_is_other_and_names_the_call_it_answers() -> None:
    df = scl.load(SEARCH)
    row = df[(df.event == "content_block_start") & (df.block == 1)].iloc[0]
    assert (row.kind, row.call_id) == ("other", "srvtoolu_1")


def test_a_server_tool_input_given_whole_in_its_start_is_one_exact_fragment() -> None:
    raw = ('{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use",'
           '"id":"srvtoolu_2","name":"web_fetch","input":{"url": "https://example.com"},'
           '"caller":{"type":"code_execution_20260120","tool_id":"srvtoolu_0"}}   }')
    body = anthropic(START) + f"event: content_block_start\ndata: {raw}\n\n".encode() + \
        anthropic(stop(1))
    out = scl.calls(body).iloc[0]
    assert (out.args, out.complete, out.valid_json) == ('{"url": "https://example.com"}',
                                                        True, True)


def test_fine_grained_arguments_that_are_not_json_are_a_finding_never_a_load_error() -> None:
    """Fine-grained tool streaming sends unvalidated JSON: a stop can close a call whose
    arguments do not parse (cut by max_tokens, or simply invalid)."""
    body = anthropic(
        START,
        block_start(1, {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}),
        delta(1, '{"path": "a.txt", "content": "line 1\nline'), stop(1),
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
        {"type": "message_stop"})
    df = scl.load(body)  # strict: no error
    assert df.problem.isna().all()
    out = scl.calls(df).iloc[0]
    assert (out.complete, out.valid_json, out.args) == (
        True, False, '{"path": "a.txt", "content": "line 1\nline')


def test_chunking_changes_nothing_with_server_tools() -> None:
    assert_chunking_changes_nothing(SEARCH)


# -- Chat Completions: the legacy function_call ----------------------------------------------

LEGACY = chat({"role": "assistant", "content": None,
               "function_call": {"name": "get_weather", "arguments": ""}},
              {"function_call": {"arguments": '{"loc'}},
              {"function_call": {"arguments": 'ation": "Paris"}'}},
              finish="function_call")


def test_a_legacy_function_call_is_a_call() -> None:
    df = scl.load(LEGACY)
    assert df.kind.astype(str).tolist() == ["call_start", "args_delta", "args_delta",
                                            "block_stop", "block_stop", "turn_stop"]
    out = scl.calls(df).iloc[0]
    assert (out.block, out.tool, out.args, out.complete) == (
        0, "get_weather", '{"location": "Paris"}', True)


def test_a_legacy_function_call_cut_off_is_not_complete() -> None:
    body = LEGACY[: LEGACY.index(b'"finish_reason": "function_call"')]
    body = body[: body.rindex(b"data:")]
    assert not scl.calls(body, strict=False).complete.any()


def test_a_legacy_function_call_of_the_wrong_shape_is_a_problem() -> None:
    with pytest.raises(scl.CaptureError, match=r"delta\.function_call should be an object"):
        scl.load(chat({"function_call": "get_weather"}))


def test_the_openai_sdk_assembles_the_same_legacy_call() -> None:
    from .support.sdk_reference import _chat_snapshot

    snapshot, error = _chat_snapshot(LEGACY)
    fc = snapshot.choices[0].message.function_call
    out = scl.calls(LEGACY).iloc[0]
    assert error is None and (out.tool, out.args) == (fc.name, fc.arguments)
