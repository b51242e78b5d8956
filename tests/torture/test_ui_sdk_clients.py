"""The real SDKs of the streams an agent server sends on to its UI (clients/vercel/*.mjs): AG-UI's
own client and ai@4's data stream reader, each on the quick suite of its format in loop mode.
What fails, family by family, is what docs/clients.md reports; every finding was read against
the SDK's source (the version clients/vercel/package-lock.json pins). A change here means the
table is stale or the SDK changed."""

from __future__ import annotations

import pytest

from .test_sdk_clients import _failures, _runnable

# the catalogue's script (streamcalls_lab/torture/clients.toml): {failing family: classes named}
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


@pytest.mark.parametrize("script", list(UI_SDKS))
def test_a_ui_sdk_client_fails_as_the_table_says(script: str) -> None:
    assert _failures(_runnable(script)) == UI_SDKS[script]
