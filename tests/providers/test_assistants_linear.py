"""The Assistants reader is linear in calls per run step (issue #34: 1,000 / 2,000 / 4,000
calls took 3.4 / 17.9 / 35 s). Counted, not timed: a step's end scans its frame for wire
lengths once, not once per call it repeats."""

from __future__ import annotations

import pytest

import streamcalls_lab as scl
from streamcalls_lab.providers import openai_assistants
from streamcalls_lab.turns import Call, Script, body, write


def test_a_steps_end_scans_its_frame_once_whatever_its_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 60
    script = Script(tuple(Call("f", f"call_{n:04d}", ('{"n": ', f"{n}}}"))
                          for n in range(calls)))
    frames = write("openai-assistants", script)
    scans = 0
    real = openai_assistants.wire_lengths

    def counted(data: str, key: str) -> list[int]:
        nonlocal scans
        scans += 1
        return real(data, key)

    monkeypatch.setattr(openai_assistants, "wire_lengths", counted)
    table = scl.calls(scl.load(body("openai-assistants", frames), strict=False))
    assert len(table) == calls
    assert scans <= len(frames)  # at most one scan per frame (per key it holds)
