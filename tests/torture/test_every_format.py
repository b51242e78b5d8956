"""Torture on every registered format: derived from the registry, each over its own framing,
the reference client passing every family in each; a format declared in one module is
served with no edit here."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from streamcalls_lab.check import TURN_FORMATS
from streamcalls_lab.framing import framing_of
from streamcalls_lab.providers import FORMATS
from streamcalls_lab.torture import check_client, judge
from streamcalls_lab.torture.cases import cases, served_formats

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


def test_a_broken_client_is_caught_in_a_new_format() -> None:
    """A fragment trimmed by the client (``trim``) is caught in Cohere, whose calls arrive
    in fragments."""
    trimmed = check_client([*REFERENCE, "--bug", "trim"], ["cohere-chat"], families=["spaces"],
                           loop=True, jobs=1, progress=False)
    assert set(trimmed["format"]) == {"cohere-chat"}
    assert set(trimmed["class"]) == {"trim"}
    assert judge  # the judge the harness uses (imported so a rename breaks here)
