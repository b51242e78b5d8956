"""The pytest plugin (streamcalls_lab.pytest_plugin), run inside pytester: record through the
kit's proxy from a loopback upstream (the kit's own ``serve``), replay, each mode, a miss,
xdist, redaction, bad cassettes, VCR cassettes and re-cuts."""

from __future__ import annotations

import json
import textwrap
from itertools import pairwise
from pathlib import Path

import pytest

from streamcalls_lab import check, turns
from streamcalls_lab.traffic.serve import SSEServer

pytest_plugins = ["pytester"]

PLUGIN = "streamcalls_lab_pytest"
KEY = "sk-live-PLANTED0123456789abcdef"
QKEY = "AIzaPLANTEDquery0123456789"
BKEY = "bodysecretPLANTED987654321"
ARGS = ('{"city": "Zü', 'rich", "note": "line\\nbreak ', 'café"}')
TURN = check.turn_bytes("openai-chat", [turns.Text(("Let me check",)),
                                        turns.Call("get_weather", "call_1", ARGS)])

CLIENT = textwrap.dedent('''
    import json, urllib.request
    import pytest
    from streamcalls_lab._calls import calls

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


OFFLINE = """
import socket, pytest

@pytest.fixture(autouse=True)
def offline(monkeypatch):
    real = socket.socket.connect
    def loopback_only(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError("network unreachable (test)")
        return real(self, address)
    monkeypatch.setattr(socket.socket, "connect", loopback_only)
"""


@pytest.fixture
def upstream():
    with SSEServer(TURN, speed=float("inf")) as server:
        yield server


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", PLUGIN, "-p", "no:cacheprovider", *args)


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
    pytester.makeconftest(OFFLINE)
    run(pytester).assert_outcomes(passed=1)


def _record(pytester, upstream, name="test_rec") -> Path:
    pytester.makepyfile(**{name: CLIENT})
    run(pytester, "--streamcalls-record-mode=once",
        f"--streamcalls-upstream={upstream.base_url}").assert_outcomes(passed=1)
    return pytester.path / "cassettes" / name / "test_turn"


def test_none_mode_without_cassette_fails_naming_it(pytester):
    pytester.makepyfile(test_rec=CLIENT)
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no streamcalls cassette at*test_turn*record-mode=once*"])


def test_a_request_no_recording_matches_fails_naming_it(pytester, upstream):
    _record(pytester, upstream)
    pytester.makepyfile(test_rec=CLIENT.replace("?key=", "/other?key="))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*POST /v1/chat/completions/other?key=*matches no recording*"
                                 "nothing was sent to the network*"])
    assert len(upstream.requests) == 1  # only the recording run reached it


def test_modes_all_and_new_episodes(pytester, upstream):
    folder = _record(pytester, upstream)
    run(pytester, "--streamcalls-record-mode=once",
        f"--streamcalls-upstream={upstream.base_url}").assert_outcomes(passed=1)
    assert len(upstream.requests) == 1  # once: a cassette there is replayed
    run(pytester, "--streamcalls-record-mode=all",
        f"--streamcalls-upstream={upstream.base_url}").assert_outcomes(passed=1)
    assert len(upstream.requests) == 2 and len(list(folder.glob("*.sse"))) == 1
    pytester.makepyfile(test_rec=CLIENT.replace(
        "body = ask(streamcalls_cassette.base_url)",
        "ask(streamcalls_cassette.base_url)\n    body = ask(streamcalls_cassette.base_url, "
        "'/v1/responses')"))
    run(pytester, "--streamcalls-record-mode=new_episodes",
        f"--streamcalls-upstream={upstream.base_url}").assert_outcomes(passed=1)
    assert len(upstream.requests) == 3  # only the new request went upstream
    assert len(list(folder.glob("*.sse"))) == 2
    run(pytester).assert_outcomes(passed=1)  # both replayed now


def test_corrupt_cassettes_name_file_and_byte(pytester, upstream):
    folder = _record(pytester, upstream)
    meta = next(folder.glob("*.meta.json"))
    good = meta.read_bytes()
    meta.write_bytes(good[:40] + b"}{" + good[40:])
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{meta.name}: byte 40: not JSON*"])
    meta.write_bytes(good)
    sse = next(folder.glob("*.sse"))
    timing = sse.with_name(sse.name + ".timing.tsv")
    timing.unlink()  # a hand edit changes the length; the reads no longer add up
    body = sse.read_bytes()
    at = body.index(b"data: ", 10)
    sse.write_bytes(body[:at] + b'data: {"choices": [{"delta": {"tool_calls": [}\n\n'
                    + body[at:])
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{sse.name}: byte *"])


def test_a_cut_recording_is_replayed_cut(pytester):
    from streamcalls_lab.pytest_plugin.replayer import scrubbed_target
    cut = TURN[: TURN.index(b"finish_reason\":\"tool_calls")]
    cut = cut[: cut.rindex(b"\n\n") + 2]
    folder = pytester.path / "cassettes" / "test_cut" / "test_turn"
    folder.mkdir(parents=True)
    (folder / "a.sse").write_bytes(cut)
    (folder / "a.sse.meta.json").write_text(json.dumps({
        "method": "POST", "path": scrubbed_target("/v1/chat/completions?key=" + QKEY, b"", []),
        "cut_off": "upstream: IncompleteRead"}))
    pytester.makepyfile(test_cut=CLIENT.split("def test_turn")[0] + textwrap.dedent("""
        def test_turn(streamcalls_cassette):
            with pytest.raises(Exception) as e:
                ask(streamcalls_cassette.base_url)
            assert "IncompleteRead" in repr(e.value)
    """))
    run(pytester).assert_outcomes(passed=1)


VCR = {"interactions": [{
    "request": {"method": "POST", "uri": "https://api.example.com/v1/chat/completions?key="
                + QKEY, "body": None, "headers": {"Authorization": ["Bearer " + KEY]}},
    "response": {"status": {"code": 200, "message": "OK"},
                 "headers": {"Content-Type": ["text/event-stream"]},
                 "body": {"string": TURN.decode()}}}], "version": 1}


def test_a_vcr_cassette_is_replayed_and_recut(pytester):
    """Every re-cut of a VCR cassette's turn reaches the client; a client that hands on the
    calls still open at the stream's end fails only the cut case, under its bug class."""
    (pytester.path / "old.json").write_text(json.dumps(VCR))
    pytester.makepyfile(test_vcr=CLIENT.replace(
        "def test_turn(", "@pytest.mark.streamcalls(cassette='old.json')\n"
        "@pytest.mark.streamcalls_recut(producers=False)\ndef test_turn(streamcalls_variant, "
    ).replace("assert list(table", "from streamcalls_lab.pytest_plugin import assert_calls\n"
              "    assert_calls(table.to_dict('records'), streamcalls_variant)\n    #"))
    result = run(pytester, "-v")
    result.stdout.fnmatch_lines(["*test_turn?as-recorded? PASSED*",
                                 "*test_turn?boundary1-moved-to-char*PASSED*",
                                 "*test_turn?cut-inside-escape-*n-at-char*PASSED*",
                                 "*test_turn?reads-cut-inside-every-multibyte-char? PASSED*",
                                 "*test_turn?one-byte-per-read? PASSED*",
                                 "*test_turn?cut-mid-arguments-before-stop? FAILED*"])
    result.assert_outcomes(passed=len(_ids(pytester, "old.json", producers=False)) - 1,
                           failed=1)
    result.stdout.fnmatch_lines(["*StreamcallsFailure: the client got the replayed turn wrong",
                                 "*bug class: eof_as_stop",
                                 "*case:*cut-mid-arguments-before-stop: the stream cut*",
                                 "*fix:*"])


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A subprocess pytest loads only the plugins its command names: each installed one
    (nbmake's schema checker, hypothesis, langsmith) costs its start about 5 s."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_xdist_workers_each_their_own_port(pytester, upstream, monkeypatch):
    _alone(monkeypatch)
    _record(pytester, upstream)
    pytester.makepyfile(test_rec=CLIENT.replace(
        "def test_turn(", "@pytest.mark.streamcalls_recut\ndef test_turn(streamcalls_variant, "
    ).replace("assert list(table", "from streamcalls_lab.pytest_plugin import assert_calls\n"
              "    assert_calls(table[table.complete].to_dict('records'), streamcalls_variant)\n"
              "    #"))
    result = pytester.runpytest_subprocess("-p", PLUGIN, "-p", "xdist", "-p", "no:cacheprovider",
                                           "-n", "2", "-q")
    result.assert_outcomes(passed=len(_ids(pytester)))


def _ids(pytester, where: str = "cassettes/test_rec/test_turn",
         producers: bool = True) -> list[str]:
    from streamcalls_lab.pytest_plugin import variants
    from streamcalls_lab.pytest_plugin.cassette import read
    rec = read(pytester.path / where)[0]
    return [v.id for v in variants.recuts(rec) + (variants.producers(rec) if producers else [])]


def test_assert_calls_names_the_bug_class_and_fix():
    from streamcalls_lab.pytest_plugin import StreamcallsFailure, assert_calls
    from streamcalls_lab.pytest_plugin.cassette import Recording
    from streamcalls_lab.pytest_plugin.variants import recuts
    from streamcalls_lab.traffic.replay import reads
    rec = Recording("POST", "/", tuple(reads(TURN)), "t.sse")
    escape = next(v for v in recuts(rec) if v.escape_cut)
    want = escape.expected[0]
    assert_calls([dict(zip(("call_id", "tool", "args"), want, strict=True))], escape)
    with pytest.raises(StreamcallsFailure) as e:
        assert_calls([{"call_id": want[0], "tool": want[1], "args": want[2].strip()[:-1]}],
                     escape)
    text = str(e.value)
    assert "bug class:" in text and "fix:" in text and "expected:" in text and "got:" in text
    assert escape.id in text


def test_the_entry_point_imports_nothing_heavy(pytester, monkeypatch):
    """pytest loads an installed entry point in every run: a suite that never uses the
    plugin must not pay for the kit (pandas, the specs), yet the plugin is there. (Other
    installed plugins are left out: what they import is not the kit's cost.)"""
    _alone(monkeypatch)
    pytester.makepyfile(test_plain=textwrap.dedent("""
        import sys

        def test_nothing_heavy(request):
            assert request.config.getoption("streamcalls_record_mode") == "none"
            heavy = sorted(m for m in sys.modules
                           if m.split(".")[0] in ("pandas", "numpy", "streamcalls_lab"))
            assert heavy == []
    """))
    result = pytester.runpytest_subprocess("-p", PLUGIN, "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess("-p", PLUGIN, "-p", "no:cacheprovider", "--co",
                                           "-q")
    result.stdout.fnmatch_lines(["*test_nothing_heavy*"])


PACED = textwrap.dedent('''
    import http.client, time
    import pytest

    @pytest.mark.streamcalls(speed=10)
    def test_paced(streamcalls_cassette):
        host, port = streamcalls_cassette.base_url.split("//")[1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("POST", "/v1/chat/completions", body=b"{}")
        resp = conn.getresponse()
        got, seen = b"", []
        while data := resp.read1(65536):
            got += data
            seen.append((time.monotonic(), len(got)))
        assert got == %(body)r
        # when each recorded read had fully arrived, whatever TCP merged
        arrived = [next(t for t, n in seen if n >= end) for end in %(ends)r]
        gaps = [b - a for a, b in zip(arrived, arrived[1:])]
        assert gaps[0] > gaps[2] > gaps[1], gaps
''')


def test_recorded_pace_follows_the_timing_sidecar(pytester):
    """At speed 10 the gaps between writes keep the recorded gaps' order (6 s, 1 s, 3 s
    recorded: 0.6, 0.1, 0.3 s served), judged relative to each other, never by a clock."""
    folder = pytester.path / "cassettes" / "test_paced" / "test_paced"
    folder.mkdir(parents=True)
    cuts = [0, len(TURN) // 4, len(TURN) // 2, 3 * len(TURN) // 4, len(TURN)]
    (folder / "a.sse").write_bytes(TURN)
    (folder / "a.sse.timing.tsv").write_text("t\tbytes\n" + "".join(
        f"{t}\t{b - a}\n" for t, (a, b) in zip((0.0, 6.0, 7.0, 10.0), pairwise(cuts),
                                               strict=True)))
    (folder / "a.sse.meta.json").write_text(json.dumps({"method": "POST",
                                                        "path": "/v1/chat/completions"}))
    pytester.makepyfile(test_paced=PACED % {"body": TURN, "ends": cuts[1:]})
    run(pytester).assert_outcomes(passed=1)


def test_the_example_suite_replays_against_the_real_sdks():
    """examples/pytest/ in replay mode, as a user runs it: the real openai, anthropic and
    langchain-openai clients over every re-cut and producer case of their cassettes; every
    case passes but the upstream bugs docs/clients.md documents, which fail under their
    named class (the example's judge asserts that)."""
    import os
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-rfE"], cwd=root / "examples" / "pytest",
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary
    assert int(summary.split(" passed")[0].split()[-1]) >= 6 * 10  # every case ran


def test_producer_variants_keep_the_turns_prose():
    from streamcalls_lab.pytest_plugin.cassette import Recording
    from streamcalls_lab.pytest_plugin.variants import producers, prose, recuts
    from streamcalls_lab.traffic.replay import reads
    rec = Recording("POST", "/", tuple(reads(TURN)), "t.sse")
    made = producers(rec)
    assert made and all(v.id.startswith("producer-") for v in made)
    for v in made + recuts(rec):
        served = prose(TURN if v.reads is None else b"".join(v.reads))
        assert served == v.prose, v.id
        if "line_separator" not in v.id and not v.ends_early:  # that quirk adds U+2028
            assert served == "Let me check", v.id


TWICE = textwrap.dedent('''
    import urllib.request
    import pytest

    @pytest.mark.streamcalls_recut(producers=False)
    def test_two(streamcalls_cassette, streamcalls_variant):
        def ask():
            req = urllib.request.Request(streamcalls_cassette.base_url + "/v1/chat/completions",
                                         data=b"{}", method="POST")
            with urllib.request.urlopen(req) as resp:
                return resp.read()
        first, second = ask(), ask()
        assert first == %(one)r
        # the case re-serves the second exchange; the first is served as recorded
        assert streamcalls_variant.recording == 1
        recut = streamcalls_variant.reads
        assert second == (%(two)r if recut is None else b"".join(recut))
        assert (second == %(two)r) == (streamcalls_variant.id in (
            "exchange2-as-recorded", "exchange2-one-byte-per-read",
            "exchange2-reads-cut-inside-every-multibyte-char"))
''')


def test_every_recording_of_a_cassette_is_recut(pytester):
    two = check.turn_bytes("openai-chat", [turns.Call("get_time", "call_2",
                                                      ('{"tz": "Eu', 'rope/Zürich"}'))])
    folder = pytester.path / "cassettes" / "test_two" / "test_two"
    folder.mkdir(parents=True)
    for name, body in (("a", TURN), ("b", two)):
        (folder / f"{name}.sse").write_bytes(body)
        (folder / f"{name}.sse.meta.json").write_text(json.dumps({
            "method": "POST", "path": "/v1/chat/completions"}))
    pytester.makepyfile(test_two=TWICE % {"one": TURN, "two": two})
    result = run(pytester, "-v", "-k", "exchange2")
    result.stdout.fnmatch_lines(["*test_two?exchange2-as-recorded? PASSED*",
                                 "*test_two?exchange2-one-byte-per-read? PASSED*",
                                 "*test_two?exchange2-cut-mid-arguments-before-stop? PASSED*"])
    from streamcalls_lab.pytest_plugin.cassette import read
    from streamcalls_lab.pytest_plugin.variants import recuts
    result.assert_outcomes(passed=len(recuts(read(folder)[1])))
