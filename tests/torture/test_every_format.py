"""Torture on every registered format: derived from the registry, each over its own framing,
the reference client passing every family in each; a format declared in one module is
served with no edit here."""

from __future__ import annotations

import dataclasses
import http.client
import sys
import urllib.parse
from pathlib import Path

import pytest

from streamcalls_lab.check import TURN_FORMATS
from streamcalls_lab.framing import framing_of
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.torture import check_client
from streamcalls_lab.torture._cases import cases, served_formats

REFERENCE = [sys.executable, str(Path(__file__).resolve().parents[2] / "clients" / "reference.py")]
# the SSE formats test_torture.py runs the reference client on already
NEW = [f for f in served_formats() if f not in (*TURN_FORMATS, "ai-sdk-ui")]


def test_every_format_with_a_writer_and_a_path_is_served() -> None:
    assert set(served_formats()) == {n for n, f in FORMATS.items() if f.write and f.path}
    with pytest.raises(ValueError, match=r"unknown format 'nope': one of .*ollama.*bedrock|"
                       r"unknown format 'nope': one of .*bedrock.*ollama"):
        cases(["nope"])


@pytest.mark.parametrize("fmt", served_formats())
def test_each_case_is_framed_by_its_formats_framing(fmt: str) -> None:
    own = FORMATS[fmt].framing
    for case in cases([fmt]):
        assert framing_of(case.body).name == own, (case.family, own)
    families = {c.family for c in cases([fmt])}
    if FORMATS[fmt].calls_whole:  # sends each call whole: never cut inside one
        assert not families & {"truncated", "cut_after_a_call", "interleaved"}
    assert "two_calls_one_tool" in families


def test_the_reference_client_passes_every_family_in_every_format() -> None:
    # two looping processes: each imports the kit for these formats (a second of CPU), and
    # two halve the ~40 s of paced serving one waits through (measured alone: 39 -> 21 s)
    report = check_client(REFERENCE, NEW, loop=True, jobs=2, progress=False, timeout=60)
    assert report.attrs["not_started"] is None
    assert report.empty, report[["format", "family", "class", "detail"]].to_string()
    assert {c.format for c in cases(NEW)} == set(NEW)


def test_a_format_declared_in_one_module_is_served(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new wire format on an existing framing: torture serves it, and the reference client
    passes it, with no edit to the harness."""
    clone = dataclasses.replace(FORMATS["ollama"], name="ollama-clone", path="/api/clone")
    monkeypatch.setitem(FORMATS, clone.name, clone)
    assert "ollama-clone" in served_formats()
    mine = cases(["ollama-clone"])
    assert {c.family for c in mine} == {c.family for c in cases(["ollama"])}
    report = check_client(REFERENCE, ["ollama-clone"], families=["two_calls_one_tool",
                          "long_line", "blank_lines"], loop=True, jobs=1, progress=False)
    assert report.empty and report.attrs["cases"] == 3


def _caught(bug: str, formats: list[str], families: list[str]) -> dict[tuple[str, str], set[str]]:
    """Each (format, family) the broken client failed, with the classes named: per case, as
    the report keeps one row per class (and one example format) only."""
    seen: dict[tuple[str, str], set[str]] = {}

    def record(case, run, found) -> None:
        if found:
            seen.setdefault((case.format, case.family), set()).update(f.cls for f in found)

    check_client([*REFERENCE, "--bug", bug], formats, families=families, loop=True, jobs=1,
                 progress=False, on_case=record)  # one import of the kit
    return seen


def test_a_trimmed_fragment_is_caught_in_every_format_that_sends_fragments() -> None:
    """``trim`` on the ``spaces`` case, whose second fragment starts with a space: caught in
    every new format whose calls arrive in fragments (Bedrock and Cohere among them)."""
    fragmented = [f for f in NEW if not FORMATS[f].calls_whole]
    assert {"bedrock-converse", "bedrock-invoke", "cohere-chat"} <= set(fragmented)
    spaces = [f for f in fragmented if any(c.family == "spaces" for c in cases([f]))]
    assert set(spaces) == set(fragmented)
    assert _caught("trim", spaces, ["spaces"]) == {(f, "spaces"): {"trim"} for f in spaces}


def test_an_ndjson_line_cut_by_splitlines_is_caught() -> None:
    """``splitlines`` over an NDJSON body: a line carrying a raw U+2028 inside a string is cut
    in two, in every NDJSON format that sends one, and nowhere else."""
    ndjson = [f for f in NEW if FORMATS[f].framing == "ndjson"]
    assert {"ollama", "openai-realtime"} <= set(ndjson)
    families = ["line_separator_in_data", "long_line", "blank_lines", "crlf", "spaces"]
    got = _caught("splitlines", ndjson, families)
    assert got == {(f, "line_separator_in_data"): {"splitlines"} for f in ndjson}


def test_an_event_stream_message_split_across_reads_is_caught() -> None:
    """A client that parses each read as whole AWS event-stream messages: it raises
    (``decode_chunks``: ``crash``) or, catching that, loses the read (``_replace``:
    ``missing_call``) wherever a message is split across reads, and passes a stream
    written a message per read."""
    eventstream = [f for f in NEW if FORMATS[f].framing == "eventstream"]
    assert {"bedrock-converse", "bedrock-invoke"} <= set(eventstream)
    split = ["message_split", "one_byte_reads", "messages_coalesced"]
    for bug, cls in (("decode_chunks", "crash"), ("decode_chunks_replace", "missing_call")):
        got = _caught(bug, eventstream, [*split, "spaces", "two_calls_one_tool"])
        assert got == {(f, family): {cls} for f in eventstream for family in split}, bug


@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic-messages", "bedrock-converse",
                                 "ollama", "ai-sdk-data"])
def test_each_case_is_served_under_its_framings_content_type(fmt: str) -> None:
    """SSE as OpenAI and Anthropic send it (``; charset=utf-8``), every other framing under
    its media type."""
    from streamcalls_lab.torture.run import _CaseServer

    case = cases([fmt], families=["two_calls_one_tool"])[0]
    own = framing_of(case.body)
    with _CaseServer(case) as server:
        host, port = urllib.parse.urlsplit(server.base_url)[1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", FORMATS[fmt].path or "/", body=b"{}")
        resp = conn.getresponse()
        assert resp.read() == case.body
        conn.close()
    want = "text/event-stream; charset=utf-8" if own.name == "sse" else own.media_type
    assert resp.getheader("content-type") == want


@pytest.mark.parametrize("family", ["no_event_lines", "args_only_in_done"],
                         ids=["transport", "producer"])
def test_a_family_another_format_has_is_not_unknown(family: str) -> None:
    """``no_event_lines`` is served in Anthropic but not in Chat (which reads no event names),
    ``args_only_in_done`` is a Responses producer's: asking for it with a family Chat has is
    fine, asking Chat for it alone says why nothing came."""
    assert {c.family for c in cases(["openai-chat"], families=["interleaved", family])} == {
        "interleaved"}
    with pytest.raises(ValueError, match=f"no case of {family} in openai-chat"):
        cases(["openai-chat"], families=[family])
    with pytest.raises(ValueError, match="unknown family 'nope'"):
        cases(["openai-chat"], families=["interleaved", "nope"])


def test_streamed_arguments_are_served_where_the_format_can_stream_them() -> None:
    """Vertex AI's ``partialArgs``/``willContinue`` (Gemini's writer with
    ``streamed_args``): served only in formats that declare the form, read back by the kit
    as the calls expected, passed by the reference client; two calls to one tool there
    still catch ``key_by_name``."""
    from streamcalls_lab import turns
    from streamcalls_lab._calls import calls
    from streamcalls_lab.loader import load
    from streamcalls_lab.turns import Call

    streams = [f for f in served_formats() if FORMATS[f].streams_args]
    assert "gemini" in streams
    for fmt in served_formats():
        mine = [c for c in cases([fmt]) if c.family == "streamed_args"]
        assert bool(mine) == (fmt in streams), fmt
        for case in mine:
            table = calls(load(case.body))
            assert list(zip(table.call_id, table.tool, table.args, strict=True)) == list(
                case.expected)
            assert b'"partialArgs"' in case.body and b'"willContinue":true' in case.body
    with pytest.raises(ValueError, match="compact JSON"):
        turns.write("gemini", turns.script([Call("f", "c", ('{"a": 1}',))],
                                           streamed_args=True))
    with pytest.raises(ValueError, match="no form that streams"):
        turns.write("openai-chat", turns.script([Call("f", "c", ('{"a":1}',))],
                                                streamed_args=True))
    assert _caught("key_by_name", streams, ["streamed_args"]) == {
        (f, "streamed_args"): {"key_by_name"} for f in streams}
    assert check_client(REFERENCE, streams, families=["streamed_args"], loop=True, jobs=1,
                        progress=False).empty
