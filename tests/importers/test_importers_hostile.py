"""importers on hostile recordings: echoed credentials scrubbed from everything written,
secret URL parameters blanked, same-named recordings kept apart, malformed files and
decompression bombs reported one line each while the rest import."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
import yaml

from streamcalls_lab import CaptureError, cli, load, provenance
from streamcalls_lab import _inflate as inflate
from streamcalls_lab._inflate import Inflater
from streamcalls_lab.importers import import_file, import_paths, vcr

from ..support import turns

KEY = "sk-live-Zq9secretKEY"
BODY = turns.anthropic(text=["Hi"])


def _echoing(secret: str) -> bytes:
    """An error event that quotes the credential back, as some gateways do."""
    return BODY + ("event: error\ndata: " + json.dumps(
        {"type": "error", "error": {"type": "auth", "message": f"bad key {secret}"}})
        + "\n\n").encode()


def _cassette(path: Path, body: bytes, *, uri: str = "https://api.example.com/v1/chat",
              headers: dict[str, list[str]] | None = None, req_body: str = "{}") -> Path:
    data = {"interactions": [{
        "request": {"method": "POST", "uri": uri, "body": req_body,
                    "headers": headers or {"authorization": [f"Bearer {KEY}"]}},
        "response": {"status": {"code": 200, "message": "OK"},
                     "headers": {"Content-Type": ["text/event-stream"],
                                 "Location": [f"https://x.example/next?key={KEY}"]},
                     "body": {"string": body.decode()}}}]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def _everything(root: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


@pytest.mark.parametrize("where", ["header", "query", "body"])
def test_a_credential_echoed_in_the_response_is_scrubbed_from_everything_written(
    tmp_path: Path, where: str,
) -> None:
    kwargs: dict = {}
    if where == "query":
        kwargs = {"uri": f"https://api.example.com/v1/chat?key={KEY}", "headers": {}}
    elif where == "body":
        kwargs = {"req_body": json.dumps({"api_key": KEY}), "headers": {}}
    path = _cassette(tmp_path / "c.yaml", _echoing(KEY), **kwargs)
    [out] = import_file(path, tmp_path / "out")
    assert KEY.encode() not in _everything(tmp_path / "out")
    assert len(out.read_bytes()) == len(_echoing(KEY))  # same length: geometry kept
    assert "scrubbed" in (provenance.read(out) or {})


def test_a_json_escaped_echo_is_scrubbed_too(tmp_path: Path) -> None:
    key = "sk/with/slashes-123"
    body = BODY + b'data: {"error": "bad key sk\\/with\\/slashes-123"}\n\n'
    path = _cassette(tmp_path / "c.yaml", body, headers={"x-api-key": [key]})
    import_file(path, tmp_path / "out")
    assert b"slashes-123" not in _everything(tmp_path / "out")


@pytest.mark.parametrize("param", ["code", "sig", "jwt", "token", "X-Amz-Signature", "se",
                                   "client_secret", "state", "anything_else"])
def test_query_values_are_blanked_in_the_metadata_whatever_their_name(tmp_path: Path,
                                                                      param: str) -> None:
    value = "Zq9queryvalue"
    url = f"https://api.example.com/v1/chat?{param}={value}&alt=sse"
    path = _cassette(tmp_path / "c.yaml", BODY, uri=url, headers={})
    [out] = import_file(path, tmp_path / "out")
    meta = provenance.read(out) or {}
    assert value not in json.dumps(meta) and "alt=sse" in meta["url"]


def test_a_query_key_is_scrubbed_from_a_location_header(tmp_path: Path) -> None:
    path = _cassette(tmp_path / "c.yaml", BODY, uri=f"https://api.example.com/v1?key={KEY}",
                     headers={})
    import_file(path, tmp_path / "out")
    assert KEY.encode() not in _everything(tmp_path / "out")


def test_same_named_recordings_from_two_folders_each_give_their_own_capture(
    tmp_path: Path,
) -> None:
    a = _cassette(tmp_path / "a" / "stream.yaml", turns.anthropic(text=["from a"]))
    b = _cassette(tmp_path / "b" / "stream.yaml", turns.anthropic(text=["from b"]))
    written = import_paths([a, b], tmp_path / "out", progress=False)
    assert len(set(written)) == 2 and all(p.exists() for p in written)
    texts = sorted("".join(load(p).fragment.dropna()) for p in written)
    assert texts == ["from a", "from b"]


def test_same_stem_with_another_suffix_does_not_collide_either(tmp_path: Path) -> None:
    a = _cassette(tmp_path / "rec.yaml", turns.anthropic(text=["yaml"]))
    b = tmp_path / "rec.json"
    b.write_text(json.dumps(yaml.safe_load(a.read_text())))
    written = import_paths([a, b], tmp_path / "out", progress=False)
    assert len(set(written)) == 2


MALFORMED = {
    "entries-not-a-list.har": json.dumps({"log": {"entries": {"a": 1}}}),
    "entry-a-string.har": json.dumps({"log": {"entries": ["oops"]}}),
    "headers-wrong.har": json.dumps({"log": {"entries": [{"request": "x", "response": 5}]}}),
    "broken.json": "{not json",
    "interaction-a-number.yaml": yaml.safe_dump({"interactions": [1]}),
    "no-interactions.yaml": "just: text\n",
    "not-utf8.jsonl": "\udcff",
    "status-list.yaml": yaml.safe_dump({"interactions": [{"request": [],
                                                          "response": {"body": []}}]}),
    "notes.txt": "not a recording",
}


def test_each_malformed_file_is_one_line_naming_it_and_the_rest_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    paths = []
    for name, text in MALFORMED.items():
        p = tmp_path / name
        p.write_bytes(text.encode("utf-8", "surrogateescape"))
        paths.append(str(p))
    good = _cassette(tmp_path / "good.yaml", BODY)
    code = cli.main(["import", *paths, str(good), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in captured.err
    assert [p.name for p in (tmp_path / "out").glob("*.sse")] == ["good__i0.sse"]
    lines = captured.err.strip().splitlines()
    for name in MALFORMED:
        assert sum(name in line for line in lines) == 1, name


def test_a_malformed_recording_is_a_capture_error_not_a_traceback(tmp_path: Path) -> None:
    for name, text in MALFORMED.items():
        p = tmp_path / name
        p.write_bytes(text.encode("utf-8", "surrogateescape"))
        with pytest.raises(CaptureError, match=name.replace(".", r"\.")):
            import_file(p, tmp_path / "out")


@pytest.mark.parametrize("wbits", [31, 15, -15])
def test_a_decompression_bomb_stops_at_the_limit_and_says_so(wbits: int) -> None:
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    bomb = z.compress(b"\0" * (4 * 1024**2)) + z.flush()
    inf = Inflater("gzip" if wbits == 31 else "deflate", limit=1024**2)
    out = b"".join(inf.feed(bomb)) + inf.flush()
    assert len(out) == 1024**2
    assert inf.cut is not None and "expands past 1048576 bytes" in inf.cut


def test_a_gzip_cut_in_half_is_an_error_not_half_a_body() -> None:
    packed = gzip.compress(BODY * 50)
    with pytest.raises(ValueError, match="cut off"):
        vcr.decode_content(packed[: len(packed) // 2], "gzip")


def _bomb_cassette(path: Path) -> Path:
    bomb = gzip.compress(b"data: " + b"x" * (8 * 1024**2) + b"\n\n")
    data = {"interactions": [{"request": {"uri": "https://x"}, "response": {
        "headers": {"Content-Type": ["text/event-stream"], "Content-Encoding": ["gzip"]},
        "body": {"string": bomb}}}]}
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_bomb_cassette_is_kept_up_to_the_limit_marked_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(inflate, "MAX_INFLATED", 1024**2)
    (written,) = import_paths([_bomb_cassette(tmp_path / "bomb.yaml")], tmp_path / "out",
                              progress=False)
    assert written.stat().st_size == 1024**2
    assert "expands past 1048576" in provenance.read(written)["cut_off"]


@pytest.mark.parametrize("where", ["written", "in-memory"])
def test_a_bomb_capture_loads_with_an_error_row_saying_so(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from streamcalls_lab.importers import captures
    from streamcalls_lab.loader import load_captures

    monkeypatch.setattr(inflate, "MAX_INFLATED", 1024**2)
    path = _bomb_cassette(tmp_path / "bomb.yaml")
    if where == "written":
        table = load(import_paths([path], tmp_path / "out", progress=False)[0], strict=False)
    else:
        table = load_captures(captures(path), strict=False)
    assert table["problem"].dropna().str.contains("expands past 1048576").any()


def test_a_credential_echoed_in_the_response_is_scrubbed_from_in_memory_captures_too(
    tmp_path: Path,
) -> None:
    from streamcalls_lab.importers import captures

    path = _cassette(tmp_path / "c.yaml", _echoing(KEY))
    [cap] = captures(path)
    body = b"".join(c if isinstance(c, bytes) else c[1] for c in cap.chunks)
    assert KEY.encode() not in body and len(body) == len(_echoing(KEY))
    from streamcalls_lab.loader import load_captures

    assert KEY not in load_captures([cap], strict=False, raw=True).to_csv()


def test_a_body_gzipped_twice_is_undone_layer_by_layer() -> None:
    # was: one layer undone, and the inner gzip kept as the capture's "SSE"
    decoded = vcr.decode_content(gzip.compress(gzip.compress(BODY)), "gzip, gzip")
    assert decoded == (BODY, None)


def test_a_body_gzipped_more_times_than_its_header_says_is_not_undone() -> None:
    assert vcr.decode_content(gzip.compress(gzip.compress(BODY)), "gzip") is None
