"""The real SDK clients of the formats beyond OpenAI and Anthropic (clients/*.py), each on
the quick suite of its format in loop mode: what fails, family by family, is what
docs/clients.md reports (its findings were read against each SDK's source); a change here
means the table is stale or the SDK changed."""

from __future__ import annotations

import pytest

from streamcalls_lab.torture import REAL_CLIENTS, RealClient, check_client
from streamcalls_lab.torture._cases import cases

SSE_EXTRAS = {"comments": {"crash"}, "retry_field": {"crash"}, "ids_and_keepalive": {"crash"}}
# the catalogue's script (streamcalls_lab/torture/clients.toml, which says its module and its
# format): {failing family: classes named}
SDKS = {
    # google-genai's _iter_response_stream takes any line but "data: " for a line of a JSON
    # error body: a comment, id: or retry: line is yielded as a chunk and fails to parse;
    # FunctionCall.args is None for a call sent without args; with Vertex AI's streamed
    # arguments, function_calls gives each part as it came (partial_args unassembled)
    "gemini_genai.py": {**SSE_EXTRAS, "empty_arguments": {"null_arguments"},
                        "streamed_args": {"other"}},
    "bedrock_boto3.py": {},
    "cohere_v2.py": {},
    # mistralai's ConversationEvents requires the SSE event name
    "mistral_conversations.py": {"no_event_lines": {"crash"}},
}
# ollama-python's Message.ToolCall has no id (ollama/ollama-python#667): every call loses
# the id the server sent, so every case fails; what else shows is asserted by family
OLLAMA_ALSO = {"blank_lines": {"crash"},  # json.loads on every line httpx yields
               "line_separator_in_data": {"splitlines"}}  # httpx iter_lines: str.splitlines


def _failures(client: RealClient) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}

    def record(case, run, findings) -> None:
        if findings:
            found.setdefault(case.family, set()).update(f.cls for f in findings)

    # one process: a second would import the SDK (0.5-2 s of CPU) again to save a few
    # seconds of wall time
    report = check_client(client.command(), list(client.formats), loop=True, jobs=1,
                          progress=False, on_case=record)
    assert report.attrs["not_started"] is None, report.attrs["not_started"]
    return found


def _runnable(script: str) -> RealClient:
    """The catalogue's client of ``script``, or a skip saying what is not installed."""
    client = REAL_CLIENTS[script]
    if (why := client.missing()) is not None:
        pytest.skip(why)
    return client


@pytest.mark.parametrize("script", list(SDKS))
def test_an_sdk_client_fails_as_the_table_says(script: str) -> None:
    assert _failures(_runnable(script)) == SDKS[script]


def test_the_ollama_sdk_drops_every_call_id() -> None:
    client = _runnable("ollama_client.py")
    got = _failures(client)
    assert set(got) == {c.family for c in cases(list(client.formats))}
    assert got["two_calls_one_tool"] == got["spaces"] == {"identity"}
    for family, classes in OLLAMA_ALSO.items():
        assert got[family] == classes, family
