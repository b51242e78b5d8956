"""replay: the same bytes, read by read, at a pace the test controls (no real sleeping)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from streamcalls_lab import load, timing
from streamcalls_lab.traffic.replay import (
    Read,
    apaced,
    areplay,
    content_type,
    due_times,
    paced,
    reads,
    replay,
)

from ..support import turns

T = TypeVar("T")

BODY = turns.chat([(0, "call_a", "lookup", ['{"q":', ' "x"}'])])


class FakeTime:
    """A clock that only moves when someone sleeps (or the test says so)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


def _timed(tmp_path: Path, times: list[float], sizes: list[int]) -> Path:
    path = tmp_path / "timed.sse"
    path.write_bytes(BODY)
    assert sum(sizes) == len(BODY)
    timing.write(path, list(zip(times, sizes, strict=True)))
    return path


def test_a_timed_capture_replays_its_recorded_reads(tmp_path: Path) -> None:
    path = _timed(tmp_path, [0.0, 0.5, 0.75], [7, 50, len(BODY) - 57])
    got = reads(path)
    assert [r.t for r in got] == [0.0, 0.5, 0.75]
    assert [len(r.data) for r in got] == [7, 50, len(BODY) - 57]


def test_an_untimed_capture_replays_one_frame_per_read(tmp_path: Path) -> None:
    got = reads(BODY, default_delay=0.1)
    assert len(got) == load(BODY).frame.nunique()
    assert all(r.data.endswith(b"\n\n") for r in got)
    assert [r.t for r in got] == pytest.approx([0.1 * i for i in range(len(got))])


def test_an_untimed_aws_event_stream_replays_one_message_per_read() -> None:
    from ..support.eventstream_turns import event

    messages = [event("messageStart", '{"role": "assistant"}'), event("messageStop", "{}")]
    assert [r.data for r in reads(b"".join(messages))] == messages


def test_replayed_bytes_are_the_capture_bytes() -> None:
    assert b"".join(replay(BODY, speed=math.inf)) == BODY


def test_a_truncated_tail_is_one_more_read() -> None:
    cut = BODY[:-5]
    got = reads(cut)
    assert b"".join(r.data for r in got) == cut
    assert not got[-1].data.endswith(b"\n\n")


PACES = {  # replay's options: the sleeps between reads recorded 0.5 s and 0.25 s apart
    "the recorded pace sleeps for each gap": ({}, [0.5, 0.25]),
    "speed scales every gap": ({"speed": 2.0}, [0.25, 0.125]),
    "infinite speed never sleeps": ({"speed": math.inf}, []),
}


@pytest.mark.parametrize(("options", "sleeps"), PACES.values(), ids=PACES)
def test_replay_sleeps_out_the_recorded_gaps(
    tmp_path: Path, options: dict, sleeps: list[float],
) -> None:
    path = _timed(tmp_path, [0.0, 0.5, 0.75], [7, 50, len(BODY) - 57])
    fake = FakeTime()
    list(replay(path, **options, clock=fake.clock, sleep=fake.sleep))
    assert fake.sleeps == pytest.approx(sleeps)


def test_a_slow_consumer_does_not_push_later_reads_back() -> None:
    chunks = [Read(0.0, b"a"), Read(1.0, b"b"), Read(2.0, b"c")]
    fake = FakeTime()
    for data in paced(chunks, clock=fake.clock, sleep=fake.sleep):
        if data == b"a":
            fake.now += 1.5  # the consumer spent 1.5 s on the first read
    assert fake.sleeps == pytest.approx([0.5])  # b is late, c is due at 2.0


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="speed"):
        due_times([Read(0.0, b"x")], speed=0)


def test_default_delay_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="default_delay"):
        reads(BODY, default_delay=-1)


def test_replay_takes_exactly_one_capture(tmp_path: Path) -> None:
    for name in ("a.sse", "b.sse"):
        (tmp_path / name).write_bytes(BODY)
    with pytest.raises(ValueError, match="exactly one capture"):
        reads(tmp_path)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a thread of its own: a test worker that also drove the browser
    (Playwright's sync API) has an event loop running on its main thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def test_async_replay_yields_the_same_bytes_and_awaits_the_gaps(tmp_path: Path) -> None:
    path = _timed(tmp_path, [0.0, 0.5, 0.75], [7, 50, len(BODY) - 57])
    fake = FakeTime()

    async def collect() -> bytes:
        return b"".join([d async for d in areplay(path, clock=fake.clock, sleep=fake.asleep)])

    assert run_async(collect()) == BODY
    assert fake.sleeps == pytest.approx([0.5, 0.25])


def test_async_pacing_follows_the_same_schedule_as_sync() -> None:
    chunks = [Read(0.0, b"a"), Read(0.2, b"b"), Read(0.2, b"c"), Read(1.0, b"d")]
    sync, asyn = FakeTime(), FakeTime()
    list(paced(chunks, speed=4, clock=sync.clock, sleep=sync.sleep))

    async def drain() -> None:
        async for _ in apaced(chunks, speed=4, clock=asyn.clock, sleep=asyn.asleep):
            pass

    run_async(drain())
    assert asyn.sleeps == pytest.approx(sync.sleeps)
    assert sync.sleeps == pytest.approx([0.05, 0.2])


@pytest.mark.parametrize(("pieces", "expected"), [
    ([b'data: {"a": 1}\n\n'], "text/event-stream"),
    ([b": comment\n", b"data: x\n\n"], "text/event-stream"),
    ([b"\0\0\0\x10"], "application/vnd.amazon.eventstream"),
    ([b'{"done": true}\n'], "application/x-ndjson"),
    ([b"", b" \n", b'\t{"done": true}\n'], "application/x-ndjson"),  # framing shown late
    ([b"\xef\xbb\xbf", b'{"done": true}\n'], "application/x-ndjson"),
    ([b" \r\n", b'[{"candidates": []}]'], "application/json"),
    ([], "text/event-stream"),
    ([b"  \n"], "text/event-stream"),
], ids=["sse", "sse-comment-first", "aws", "ndjson", "ndjson-after-whitespace-reads",
        "ndjson-after-bom", "json-array", "empty", "whitespace-only"])
def test_the_content_type_is_that_of_the_framing_the_reads_are_read_as(
        pieces: list[bytes], expected: str) -> None:
    assert content_type([Read(float(i), p) for i, p in enumerate(pieces)]) == expected


@pytest.mark.parametrize("pace", ["paced", "apaced", "replay", "areplay"])
def test_a_misspelled_pacing_keyword_fails_at_the_call_not_on_first_read(pace: str) -> None:
    from streamcalls_lab.traffic import replay as module

    source = [Read(0.0, b"data: {}\n\n")] if pace.endswith("paced") else b"data: {}\n\n"
    with pytest.raises(TypeError, match="sped"):
        getattr(module, pace)(source, sped=2.0)
