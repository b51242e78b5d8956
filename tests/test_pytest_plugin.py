"""The pytest plugin (streamcalls_lab.pytest_plugin), run inside pytester: record through the
kit's proxy from a loopback upstream (the kit's own ``serve``), replay, each mode, a miss,
xdist, redaction, bad cassettes, VCR cassettes and re-cuts."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from streamcalls_lab import check, turns
from streamcalls_lab.traffic.serve import SSEServer

pytest_plugins = ["pytester"]

PLUGIN = "streamcalls_lab.pytest_plugin"
KEY = "sk-live-PLANTED0123456789abcdef"
QKEY = "AIzaPLANTEDquery0123456789"
BKEY = "bodysecretPLANTED987654321"
ARGS = ('{"city": "Zü', 'rich", "note": "line\\nbreak ', 'café"}')
TURN = check.turn_bytes("openai-chat", [turns.Text(("Let me check",)),
                                        turns.Call("get_weather", "call_1", ARGS)])

CLIENT = textwrap.dedent('''
    import json, urllib.request
    import pytest
    from streamcalls_lab.calls import calls

    def ask(base, path="/v1/chat/completions?key=%(q)s"):
        req = urllib.request.Request(base + path, method="POST",
            data=json.dumps({"model": "m", "api_key": "%(b)s", "stream": True}).encode(),
            headers={"Authorization": "Bearer %(k)s", "content-type": "application/json"})
        with urllib.request.urlopen(req) as resp:
            return resp.read()

    def test_turn(streamcalls_cassette):
        body = ask(streamcalls_cassette.base_url)
        table = calls(body)
        assert list(table["args"]) == [%(args)r]
''') % {"q": QKEY, "b": BKEY, "k": KEY, "args": "".join(ARGS)}


@pytest.fixture
def upstream():
    with SSEServer(TURN, speed=float("inf")) as server:
        yield server


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", PLUGIN, "-p", "no:cacheprovider", *args)


def test_record_then_replay_offline(pytester, upstream):
    pytester.makepyfile(test_rec=CLIENT)
    rec = run(pytester, "--streamcalls-record-mode=once",
              f"--streamcalls-upstream={upstream.base_url}")
    rec.assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_rec" / "test_turn"
    captures = sorted(folder.glob("*.sse"))
    assert len(captures) == 1 and captures[0].read_bytes() == TURN
    assert len(upstream.requests) == 1
    # every byte written: no credential, in any form the kit knows
    from streamcalls_lab import provenance
    for f in folder.rglob("*"):
        data = f.read_bytes()
        for secret in (KEY, QKEY, BKEY):
            for form in provenance.secret_forms(secret):
                assert form.encode() not in data, (f.name, secret)
    # replay: the upstream gone and every non-loopback connect refused
    upstream.close()
    pytester.makeconftest('''
        import socket, pytest
        _real = socket.socket.connect
        def _loopback_only(self, address):
            host = address[0] if isinstance(address, tuple) else address
            if host not in ("127.0.0.1", "::1", "localhost"):
                raise OSError("network unreachable (test)")
            return _real(self, address)
        socket.socket.connect = _loopback_only
    ''')
    run(pytester).assert_outcomes(passed=1)
