"""The real SDK clients of the formats beyond OpenAI and Anthropic (clients/*.py, and the UI
streams' own clients under clients/vercel/), each on the quick suite of its format in loop
mode: what fails, family by family, is what docs/clients.md reports (its findings were read
against each SDK's source); a change here means the table is stale or the SDK changed."""

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

# The streams an agent server sends on to its UI (clients/vercel/*.mjs): AG-UI's own client and
# ai@4's data stream reader, each read against the version clients/vercel/package-lock.json
# pins. {failing family: classes named}
UI_SDKS = {
    # @ag-ui/client 1.0.0, parseSSEStream (src/transform/sse.ts): `buffer.split(/\n\n/)` ends an
    # event only at two LFs and `eventText.split("\n")` a line only at LF, where the SSE spec
    # (WHATWG HTML 9.2.5) ends a line at CRLF, LF or CR. A CRLF stream (sse-starlette's default
    # separator) never splits: nothing is dispatched until the connection closes, and then
    # every `data:` line of the body, each ending in "\r", is joined into one JSON.parse that
    # throws ("Unexpected non-whitespace character after JSON at position 66", the end of the
    # first event); a CR-only stream is one line. `runAgent` rejects: a valid stream raised,
    # `crash`. An upstream bug (ag-ui-protocol/ag-ui, sdks/typescript/packages/client).
    "vercel/agui_client.mjs": {"crlf": {"crash"}, "cr": {"crash"},
                               "cr_lf_read_split": {"crash"}},
    # @ai-sdk/ui-utils 1.2.11, processDataStream: lines are split on "\n" and only "" is
    # skipped, so a whitespace-only line (" \t") goes to parseDataStreamPart, which throws
    # "No separator found": `crash`. The data stream protocol writes no such line (its own
    # formatDataStreamPart never does): a gateway or proxy that pads lines breaks it. CRLF
    # passes: JSON.parse takes the "\r" left on each line as whitespace.
    "vercel/data_stream_client.mjs": {"blank_lines": {"crash"}},
}


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


@pytest.mark.parametrize("script", list(UI_SDKS))
def test_a_ui_sdk_client_fails_as_the_table_says(script: str) -> None:
    assert _failures(_runnable(script)) == UI_SDKS[script]
