"""The torture harness: real HTTP on loopback, a client process per case, each bug named.

The clients under ``clients/`` are run as processes: the reference one must pass every
case in all three formats, and each deliberately broken one (``--bug NAME``, one per spec
with ``client=True``) must be caught under its own class, and only that, in all three. The
real SDK adapters run on a few families where their package installs, and must fail
exactly as docs/clients.md says.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import streamcalls_lab as scl
from streamcalls_lab.check import REPORT_COLUMNS, TURN_FORMATS
from streamcalls_lab.cli import main
from streamcalls_lab.faults import SPECS
from streamcalls_lab.torture import CLASSES, Run, cases, check_client, judge, markdown
from streamcalls_lab.torture.run import _writes, client_env

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
REFERENCE = [sys.executable, str(CLIENTS / "reference.py")]
BUGS = tuple(name for name, spec in SPECS.items() if spec.client)


def _case(family: str, fmt: str = "openai-chat"):
    return next(c for c in cases([fmt]) if c.family == family)


def _dechunk(stream: bytes) -> bytes:
    out, at = b"", 0
    while True:
        end = stream.index(b"\r\n", at)
        size = int(stream[at:end].split(b";")[0], 16)
        if size == 0:
            return out
        out += stream[end + 2:end + 2 + size]
        at = end + 4 + size


# -- the cases themselves ------------------------------------------------------------------
@pytest.mark.parametrize("suite", ["quick", "full"])
def test_every_case_decodes_with_the_kits_own_loader_to_the_calls_expected(suite: str) -> None:
    for case in cases(suite=suite):
        table = scl.calls(scl.load(case.body))
        decoded = {(r.call_id, r.tool, r.args) for r in table.itertuples()}
        assert set(case.expected) <= decoded, (case.family, case.format)


def test_every_family_is_in_all_three_formats() -> None:
    by_format = {f: {c.family for c in cases([f])} for f in TURN_FORMATS}
    assert by_format["openai-chat"] == by_format["anthropic-messages"] == by_format[
        "openai-responses"]


@pytest.mark.parametrize("family", ["odd_chunks", "gzip", "one_byte_reads"])
def test_what_the_server_writes_decodes_back_to_the_body(family: str) -> None:
    case = _case(family)
    body = _dechunk(b"".join(_writes(case)))
    assert (gzip.decompress(body) if case.gzip else body) == case.body


def test_utf8_reads_are_cut_inside_characters_only() -> None:
    reads = _case("utf8_read_split").reads
    assert len(reads) > 5
    for read in reads[1:]:
        assert read[0] & 0xC0 == 0x80  # every read starts with a continuation byte


# -- judging -------------------------------------------------------------------------------
def test_a_unicode_error_on_split_reads_is_decode_chunks() -> None:
    run = Run(1, stderr="Traceback ...\nUnicodeDecodeError: 'utf-8' codec can't decode")
    assert [f.cls for f in judge(_case("utf8_read_split"), run)] == ["decode_chunks"]


def test_parsed_input_is_compared_by_value_and_the_report_says_so() -> None:
    case = _case("escapes")
    (call_id, tool, args), = case.expected
    ok = Run(0, calls=[{"call_id": call_id, "tool": tool, "input": json.loads(args)}])
    assert judge(case, ok) == []
    wrong = Run(0, calls=[{"call_id": call_id, "tool": tool, "input": {"text": "x"}}])
    found, = judge(case, wrong)
    assert found.cls == "other" and "parsed input" in found.detail


def test_a_client_that_never_exits_is_reported_not_waited_for() -> None:
    found, = judge(_case("spaces"), Run(None, stderr="no exit within 5 s"))
    assert found.cls == "other" and "no exit" in found.detail


def test_raising_after_a_cut_is_fine_but_raising_on_a_whole_stream_is_a_crash() -> None:
    cut = _case("cut_after_a_call")
    calls = [{"call_id": i, "tool": t, "args": a} for i, t, a in cut.expected]
    assert judge(cut, Run(1, calls=calls, stderr="IncompleteRead")) == []
    whole = _case("spaces")
    calls = [{"call_id": i, "tool": t, "args": a} for i, t, a in whole.expected]
    assert [f.cls for f in judge(whole, Run(1, calls=calls, stderr="boom"))] == ["crash"]


def test_markdown_keeps_captured_text_in_code_spans_with_pipes_escaped() -> None:
    import pandas as pd

    table = pd.DataFrame([{"class": "other", "got": "a|b <script>"}])
    assert markdown(table).splitlines()[-1] == "| other | `` a\\|b <script> `` |"


# -- real processes ------------------------------------------------------------------------
def test_the_reference_client_passes_every_case_in_all_three_formats() -> None:
    report = check_client(REFERENCE, progress=False, jobs=16)
    assert report.empty, report.to_dict("records")
    assert report.attrs["cases"] == len(cases()) and report.attrs["seconds"] > 0
    assert tuple(report.columns) == REPORT_COLUMNS


@pytest.mark.parametrize("bug", BUGS)
def test_each_broken_client_is_caught_under_its_own_class_in_all_three_formats(bug: str
                                                                                ) -> None:
    seen: dict[str, set[str]] = {}

    def note(case, run, found) -> None:
        for f in found:
            seen.setdefault(f.cls, set()).add(case.format)

    report = check_client([*REFERENCE, "--bug", bug], progress=False, jobs=16, on_case=note)
    assert list(report["class"]) == [bug]
    assert seen == {bug: set(TURN_FORMATS)}


def test_the_harness_reports_in_the_specs_classes_and_order() -> None:
    assert list(CLASSES) == list(SPECS) and {"key_by_id", "merged_calls"} <= set(BUGS)


def test_a_broken_client_refuses_a_bug_the_specs_do_not_name() -> None:
    env = client_env("http://127.0.0.1:9", "openai-chat")
    for known in (True, False):  # the names the harness passes, or the specs themselves
        if not known:
            del env["STREAMCALLS_BUGS"]
        proc = subprocess.run([*REFERENCE, "--bug", "no_such_bug"], env=env, timeout=60,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 1 and "unknown bug 'no_such_bug'" in proc.stderr
        assert ", ".join(BUGS) in proc.stderr


def test_cli_exit_codes_are_0_clean_1_failures_2_usage(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    client = " ".join(REFERENCE)
    base = ["torture", "--format", "openai-chat", "--family", "spaces"]
    assert main([*base, "--client", client]) == 0
    out = tmp_path / "report.md"
    assert main([*base, "--client", client + " --bug trim", "--report", str(out)]) == 1
    assert out.read_text("utf-8").startswith("| class |")
    assert main(["torture", "--client", client, "--format", "nope"]) == 2
    assert main(["torture", "--client", "", "--format", "openai-chat"]) == 2
    assert "1 cases" in capsys.readouterr().out


# -- the real clients, where they install ----------------------------------------------------
# What docs/clients.md reports on these families (see its findings); a change here means the
# table is stale or the client changed. LangChain is slow to import: one family each.
FAMILIES = ["interleaved", "index_reuse", "retry_field", "truncated", "no_event_lines"]
REAL = {
    "openai_chat_stream.py": ("openai", ["openai-chat"], FAMILIES,
                              {"parse_to_finish", "merged_calls", "crash"}),
    "openai_chat_iter.py": ("openai", ["openai-chat"], FAMILIES, {"crash"}),
    "openai_responses_stream.py": ("openai", ["openai-responses"], FAMILIES,
                                   {"crash", "missing_call"}),
    "openai_responses_iter.py": ("openai", ["openai-responses"], FAMILIES, {"crash"}),
    "anthropic_stream.py": ("anthropic", ["anthropic-messages"], FAMILIES,
                            {"missing_call", "other"}),
    "anthropic_iter.py": ("anthropic", ["anthropic-messages"], FAMILIES, {"missing_call"}),
    "httpx_sse_client.py": ("httpx_sse", list(TURN_FORMATS), FAMILIES, {"crash"}),
    "sseclient_client.py": ("sseclient", list(TURN_FORMATS), FAMILIES, set()),
    "langchain_openai_client.py": ("langchain_openai", ["openai-chat"], ["retry_field"],
                                   {"crash"}),
    "langchain_anthropic_client.py": ("langchain_anthropic", ["anthropic-messages"],
                                      ["retry_field"], set()),
}


@pytest.mark.parametrize("script", list(REAL))
def test_a_real_client_fails_as_the_table_says(script: str) -> None:
    module, formats, families, classes = REAL[script]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    report = check_client([sys.executable, str(CLIENTS / script)], formats,
                          families=families, progress=False, jobs=8)
    assert set(report["class"]) == classes, report.to_dict("records")


def test_the_vercel_ai_sdk_fails_as_the_table_says() -> None:
    vercel = CLIENTS / "vercel"
    if shutil.which("node") is None or not (vercel / "node_modules").is_dir():
        pytest.skip("node or the Vercel AI SDK (npm ci in clients/vercel) is not installed")
    report = check_client(["node", str(vercel / "client.mjs")], TURN_FORMATS, families=FAMILIES,
                          progress=False, jobs=8)
    assert set(report["class"]) == {"parse_to_finish", "other"}, report.to_dict("records")
