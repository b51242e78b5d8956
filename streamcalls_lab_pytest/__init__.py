"""The pytest plugin's entry point: chunk-exact cassettes, one per test, replayed to the client
under test.

Registered as the ``pytest11`` entry point ``streamcalls_lab_pytest``; it does nothing until a
test asks for :func:`streamcalls_cassette` (or ``streamcalls_variant``). A top-level package
that imports only pytest and the standard library, because pytest loads every installed
entry point in every run: the kit (``streamcalls_lab``, pandas with it) is imported inside the
fixtures, by a test that uses them. The cassettes, re-cuts and assertions live in
:mod:`streamcalls_lab.pytest_plugin`. See ``docs/pytest.md``.

- ``--streamcalls-record-mode`` (``none``, the default; ``once``; ``new_episodes``; ``all``:
  pytest-recording's modes, under a name that cannot clash with its ``--record-mode``).
- ``@pytest.mark.streamcalls(upstream=..., cassette=..., speed=...)``: where record mode
  sends requests (else ``--streamcalls-upstream``), a cassette of the test's own choosing
  (a folder, or a VCR.py / pytest-recording YAML or JSON file), the replay pace.
- ``@pytest.mark.streamcalls_recut(producers=True, max_moves=6)``: the test runs once per
  re-cut of each recording of its cassette (``streamcalls_variant``, ids saying what each
  does), and once per producer family its wire format can carry.

A request that matches no recording fails the test naming it; nothing reaches the network in
replay mode (the server answers it 404 itself).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

MODES = ("none", "once", "new_episodes", "all")
_SERVER = pytest.StashKey[Any]()
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamcalls", "streamcalls-lab chunk-exact cassettes")
    group.addoption("--streamcalls-record-mode", choices=MODES, default="none",
                    help="none: replay only (default); once: record a missing cassette; "
                         "new_episodes: record requests no recording matches; all: record "
                         "every cassette anew")
    group.addoption("--streamcalls-upstream", default=None,
                    help="the upstream base URL record mode sends requests to "
                         "(a test's streamcalls marker may name its own)")
    group.addoption("--streamcalls-speed", type=float, default=math.inf,
                    help="replay pace: 1 is as recorded, inf (default) at once")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "streamcalls(upstream=None, cassette=None, speed=None): "
                            "the streamcalls cassette's upstream, file or folder, and pace")
    config.addinivalue_line("markers", "streamcalls_recut(producers=True, max_moves=6): run "
                            "the test over every re-cut of its cassette and each producer family")


@dataclass
class Cassette:
    """What a test gets: the ``base_url`` to point its client at, the cassette, the mode."""

    base_url: str
    path: Path
    mode: str
    recording: bool
    server: Any


def _marker(node: Any) -> dict[str, Any]:
    mark = node.get_closest_marker("streamcalls")
    return dict(mark.kwargs) if mark is not None else {}


def cassette_path(node: Any, name: str) -> Path:
    """``cassettes/<module>/<test>`` beside the test file, or the marker's ``cassette``."""
    where = Path(node.path).parent
    chosen = _marker(node).get("cassette")
    if chosen:
        return where / chosen
    return where / "cassettes" / Path(node.path).stem / _UNSAFE.sub("-", name)


def _recordings(path: Path) -> list[Any]:
    from streamcalls_lab.pytest_plugin.cassette import read

    return read(path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker("streamcalls_recut")
    if mark is None or "streamcalls_variant" not in metafunc.fixturenames:
        return
    from streamcalls_lab.pytest_plugin.variants import MAX_MOVES, Variant, producers, recuts

    path = cassette_path(metafunc.definition, metafunc.definition.originalname)
    variants: list[Variant] = [Variant("as-recorded", "the recording as it is", None)]
    recs = _recordings(path) if path.exists() else []
    if recs:
        variants = []
        for i, rec in enumerate(recs):
            mine = recuts(rec, max_moves=mark.kwargs.get("max_moves", MAX_MOVES))
            if mark.kwargs.get("producers", True):
                mine += producers(rec)
            # a cassette of several exchanges: each one's cases, named by which it is
            variants += [v.of(i) for v in mine] if len(recs) > 1 else mine
    metafunc.parametrize("streamcalls_variant", variants, ids=[v.id for v in variants],
                         indirect=True)


@pytest.fixture
def streamcalls_variant(request: pytest.FixtureRequest) -> Any:
    """The re-cut this run of a ``streamcalls_recut`` test serves (its ``id``, ``what``,
    and the ``expected`` calls :func:`~.verdict.assert_calls` judges against)."""
    from streamcalls_lab.pytest_plugin.variants import Variant

    return getattr(request, "param", Variant("as-recorded", "the recording as it is", None))


def _upstream(request: pytest.FixtureRequest) -> str:
    up = _marker(request.node).get("upstream") or request.config.getoption(
        "streamcalls_upstream")
    if not up:
        pytest.fail("streamcalls record mode needs an upstream: @pytest.mark.streamcalls("
                    "upstream=URL) or --streamcalls-upstream URL", pytrace=False)
    return str(up)


def _clear(folder: Path) -> None:
    """Record ``all``: the cassette's own files go (captures and their sidecars), nothing
    else in the folder."""
    from streamcalls_lab.sources import CAPTURE_SUFFIXES

    if folder.is_dir():
        for p in folder.iterdir():
            if p.is_file() and any(s in p.name for s in CAPTURE_SUFFIXES):
                p.unlink()


@pytest.fixture
def streamcalls_cassette(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """A base URL for the test's client: the kit's recording proxy (record) or the kit's
    server answering from the cassette (replay). See the module docstring."""
    from streamcalls_lab.pytest_plugin.replayer import CassetteServer
    from streamcalls_lab.traffic.proxy import RecordingProxy

    mode = request.config.getoption("streamcalls_record_mode")
    node = request.node
    path = cassette_path(node, getattr(node, "originalname", node.name))
    speed = _marker(node).get("speed", request.config.getoption("streamcalls_speed"))
    is_file = path.suffix.lower() in (".yaml", ".yml", ".json")
    exists = path.is_file() if is_file else (path.is_dir() and any(path.iterdir()))
    record = mode == "all" or (mode in ("once", "new_episodes") and not exists)
    if record and is_file:
        pytest.fail(f"{path} is a VCR cassette: streamcalls replays it; re-record it with "
                    "VCR.py or pytest-recording, or record a streamcalls cassette folder",
                    pytrace=False)
    if not record and not exists:
        pytest.fail(f"no streamcalls cassette at {path}: record it with "
                    "--streamcalls-record-mode=once (and an upstream)", pytrace=False)
    if record:
        if mode == "all":
            _clear(path)
        with RecordingProxy(_upstream(request), path) as proxy:
            request.node.stash[_SERVER] = None
            yield Cassette(proxy.base_url, path, mode, True, proxy)
        return
    recs = _recordings(path)
    variant = request.getfixturevalue("streamcalls_variant") \
        if "streamcalls_variant" in request.fixturenames else None
    if variant is not None and variant.recording < len(recs):
        recs[variant.recording] = variant.applied(recs[variant.recording])
    proxy = RecordingProxy(_upstream(request), path) if mode == "new_episodes" else None
    try:
        if proxy is not None:
            proxy.start()
        with CassetteServer(recs, name=str(path), speed=speed,
                            fallback=proxy.base_url if proxy else None) as server:
            request.node.stash[_SERVER] = server
            yield Cassette(server.base_url, path, mode, False, server)
    finally:
        if proxy is not None:
            proxy.close()


def _miss_text(item: pytest.Item) -> str | None:
    server = item.stash.get(_SERVER, None)
    misses = getattr(server, "misses", None)
    if not misses:
        return None
    return "streamcalls: " + "\n".join(misses)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A request the cassette had no answer for is the test's failure, whatever the client
    made of the 404 it got."""
    try:
        result = yield
    except (pytest.skip.Exception, pytest.exit.Exception):
        raise
    except BaseException as e:
        text = _miss_text(item)
        if text is None:
            raise
        raise pytest.fail.Exception(f"{text}\n(the client then raised {type(e).__name__})",
                                    pytrace=False) from e
    text = _miss_text(item)
    if text is not None:
        pytest.fail(text, pytrace=False)
    return result


__all__ = ["MODES", "Cassette", "cassette_path"]
