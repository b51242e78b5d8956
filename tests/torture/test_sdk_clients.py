"""The real SDK clients of the formats beyond OpenAI and Anthropic (clients/*.py), each on
the quick suite of its format in loop mode: what fails, family by family, is what
docs/clients.md reports (its findings were read against each SDK's source); a change here
means the table is stale or the SDK changed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from streamcalls_lab.torture import check_client
from streamcalls_lab.torture._cases import cases

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
SSE_EXTRAS = {"comments": {"crash"}, "retry_field": {"crash"}, "ids_and_keepalive": {"crash"}}
# script: (module it needs, format, {failing family: classes named})
SDKS = {
    # google-genai's _iter_response_stream takes any line but "data: " for a line of a JSON
    # error body: a comment, id: or retry: line is yielded as a chunk and fails to parse;
    # FunctionCall.args is None for a call sent without args; with Vertex AI's streamed
    # arguments, function_calls gives each part as it came (partial_args unassembled)
    "gemini_genai.py": ("google.genai", "gemini",
                        {**SSE_EXTRAS, "empty_arguments": {"null_arguments"},
                         "streamed_args": {"other"}}),
    "bedrock_boto3.py": ("boto3", "bedrock-converse", {}),
    "cohere_v2.py": ("cohere", "cohere-chat", {}),
    # mistralai's ConversationEvents requires the SSE event name
    "mistral_conversations.py": ("mistralai", "mistral-conversations",
                                 {"no_event_lines": {"crash"}}),
}
# ollama-python's Message.ToolCall has no id (ollama/ollama-python#667): every call loses
# the id the server sent, so every case fails; what else shows is asserted by family
OLLAMA_ALSO = {"blank_lines": {"crash"},  # json.loads on every line httpx yields
               "line_separator_in_data": {"splitlines"}}  # httpx iter_lines: str.splitlines


def _failures(script: str, fmt: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}

    def record(case, run, findings) -> None:
        if findings:
            found.setdefault(case.family, set()).update(f.cls for f in findings)

    # one process: a second would import the SDK (0.5-2 s of CPU) again to save a few
    # seconds of wall time
    report = check_client([sys.executable, str(CLIENTS / script)], [fmt], loop=True, jobs=1,
                          progress=False, on_case=record)
    assert report.attrs["not_started"] is None, report.attrs["not_started"]
    return found


def _need(module: str) -> None:
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        pytest.skip(f"{module} is not installed")


@pytest.mark.parametrize("script", list(SDKS))
def test_an_sdk_client_fails_as_the_table_says(script: str) -> None:
    module, fmt, want = SDKS[script]
    _need(module)
    assert _failures(script, fmt) == want


def test_the_ollama_sdk_drops_every_call_id() -> None:
    _need("ollama")
    got = _failures("ollama_client.py", "ollama")
    assert set(got) == {c.family for c in cases(["ollama"])}
    assert got["two_calls_one_tool"] == got["spaces"] == {"identity"}
    for family, classes in OLLAMA_ALSO.items():
        assert got[family] == classes, family
