"""A credential echoed in pieces or encoded (issue #34): split across SSE frames and across
argument fragments, JSON-escaped character by character (alone or mixed with plain
characters, in a call's arguments too), base64 and base64url at every alignment inside a
longer blob, URL-quoted, in a URL's fragment and in a query string. For each form and each
writer (proxy, record, import HAR, import VCR, redact) no part of the key is on disk."""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

from streamcalls_lab import echoes, provenance
from streamcalls_lab.errors import CaptureError
from streamcalls_lab.importers import import_file
from streamcalls_lab.redact import redact_file
from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.record import RecordError, record
from streamcalls_lab.traffic.server import LoopbackServer

from ..support import turns
from ..support.stream_handler import StreamHandler

KEY = "sk-live/Ab+Cd_Ef0123456789wxyz"
ENV = "STREAMCALLS_TEST_FORMS_KEY"
TIMEOUT = 20


def _text_frame(wire: str) -> bytes:
    """An Anthropic text delta whose string is ``wire`` exactly as written on the wire."""
    return ('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            f'"delta":{{"type":"text_delta","text":"{wire}"}}}}\n\n').encode()


def _escaped(text: str, every: int = 1, upper: bool = False) -> str:
    return "".join((f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}") if i % every == 0
                   else c for i, c in enumerate(text))


def _blob(k: int, urlsafe: bool) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(b"\x89PNG"[:k] + KEY.encode() + b"\x00tail").decode()


FORMS: dict[str, Callable[[], bytes]] = {
    "split across frames": lambda: turns.anthropic(text=["Your key is ", KEY[:9], KEY[9:]]),
    "split across argument fragments": lambda: turns.chat(
        [(0, "call_a", "f", ['{"t": "', KEY[:5], KEY[5:17], KEY[17:] + '"}'])]),
    "split across two calls' fragments": lambda: turns.chat(
        [(0, "call_a", "f", ['{"t": "' + KEY[:12]]), (1, "call_b", "g", ['{"u": 1}']),
         (0, None, None, [KEY[12:] + '"}'])]),
    "every character \\u-escaped": lambda: turns.anthropic(text=["Hi"]) + _text_frame(
        _escaped(KEY)),
    "escaped and plain mixed": lambda: turns.anthropic(text=["Hi"]) + _text_frame(
        _escaped(KEY, every=2, upper=True)),
    "escaped inside arguments": lambda: turns.chat(
        [(0, "call_a", "f", ['{"t": "' + _escaped(KEY[:10]), KEY[10:] + '"}'])]),
    "escaped and split": lambda: turns.anthropic(text=["Hi"]) + _text_frame(
        _escaped(KEY[:11])) + _text_frame(_escaped(KEY[11:], every=3)),
    **{f"base64 at offset {k}": (lambda k=k: turns.anthropic(text=["img ", _blob(k, False)]))
       for k in range(3)},
    **{f"base64url at offset {k}": (lambda k=k: turns.anthropic(text=[_blob(k, True)]))
       for k in range(3)},
    "base64 split across frames": lambda: turns.anthropic(
        text=[_blob(1, False)[:20], _blob(1, False)[20:]]),
    "url-quoted": lambda: turns.anthropic(text=["see ", quote(KEY, safe="")]),
    "in a URL fragment": lambda: turns.anthropic(
        text=[f"https://app.example/cb#access_token={KEY}&state=1"]),
    "in a query string, quoted": lambda: turns.anthropic(
        text=[f"https://api.example/v1?alt=sse&key={quote(KEY, safe='')}"]),
}


def _pieces() -> list[str]:
    """Every 8-character piece of the key, and the key's own escaped spellings."""
    return [KEY[i:i + 8] for i in range(len(KEY) - 7)] + [_escaped(KEY), quote(KEY, safe="")]


def _nowhere(root: Path) -> None:
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    for path in files:
        data = path.read_bytes()
        for piece in _pieces():
            assert piece.encode() not in data, f"{piece!r} written in {path.name}"
        assert echoes.find(data, [KEY]) is None, f"the key is decodable from {path.name}"


@pytest.mark.parametrize("form", FORMS)
def test_a_body_holds_the_key_in_this_form(form: str) -> None:
    assert echoes.find(FORMS[form](), [KEY]) is not None
    assert echoes.find(FORMS[form](), [KEY.replace("Ab+Cd", "AbXCd")]) is None


class _Plays(StreamHandler):
    def answer(self) -> None:
        self.stream(self.server.owner.body)  # type: ignore[attr-defined]


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    server = LoopbackServer(_Plays, "127.0.0.1", 0)
    with server:
        yield server


@pytest.mark.parametrize("form", FORMS)
def test_the_proxy_writes_no_part_of_the_key(form: str, upstream: LoopbackServer,
                                             tmp_path: Path) -> None:
    upstream.body = FORMS[form]()  # type: ignore[attr-defined]
    with RecordingProxy(upstream.base_url, tmp_path) as proxy:
        host, port = proxy.base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
        conn.request("POST", "/v1/messages", body=b"{}",
                     headers={"authorization": f"Bearer {KEY}"})
        assert conn.getresponse().read() == upstream.body  # type: ignore[attr-defined]
        conn.close()
    [meta] = tmp_path.glob("*.meta.json")
    assert "credential" in json.loads(meta.read_text())["not_saved"]
    _nowhere(tmp_path)


@pytest.mark.parametrize("form", FORMS)
def test_record_writes_no_part_of_the_key(form: str, upstream: LoopbackServer, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, KEY)
    upstream.body = FORMS[form]()  # type: ignore[attr-defined]
    with pytest.raises(RecordError, match="credential"):
        record(upstream.base_url + "/v1/messages", b"{}", tmp_path / "x.sse", key_env=ENV,
               auth="bearer")
    _nowhere(tmp_path)


def _har(body: bytes, url: str, headers: list[dict[str, str]]) -> dict[str, Any]:
    return {"log": {"entries": [{
        "request": {"method": "POST", "url": url, "headers": headers},
        "response": {"status": 200,
                     "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                     "content": {"mimeType": "text/event-stream", "text": body.decode()}}}]}}


def _imported(path: Path, out: Path) -> None:
    """Import ``path``: refused whole, or written with the key replaced."""
    try:
        import_file(path, out)
    except CaptureError as e:
        assert "credential" in e.reason and KEY not in str(e)


HAR_REQUESTS = {  # where the request carried the key: a header, or the URL's fragment
    "bearer": ("https://api.example.com/v1/messages",
               [{"name": "Authorization", "value": f"Bearer {KEY}"}]),
    "url fragment": ("https://api.example.com/v1/messages#access_token="
                     f"{quote(KEY, safe='')}&state=x", []),
}


@pytest.mark.parametrize("request_", HAR_REQUESTS)
@pytest.mark.parametrize("form", FORMS)
def test_import_har_writes_no_part_of_the_key(form: str, request_: str, tmp_path: Path) -> None:
    path = tmp_path / "in" / "h.har"
    path.parent.mkdir()
    path.write_text(json.dumps(_har(FORMS[form](), *HAR_REQUESTS[request_])))
    _imported(path, tmp_path / "out")
    _nowhere(tmp_path / "out")


@pytest.mark.parametrize("form", FORMS)
def test_import_vcr_writes_no_part_of_the_key(form: str, tmp_path: Path) -> None:
    data = {"interactions": [{
        "request": {"method": "POST", "uri": "https://api.example.com/v1/chat", "body": "{}",
                    "headers": {"Authorization": [f"Bearer {KEY}"]}},
        "response": {"status": {"code": 200}, "headers": {"Content-Type": ["text/event-stream"]},
                     "body": {"string": FORMS[form]().decode()}}}]}
    path = tmp_path / "in" / "c.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data))
    _imported(path, tmp_path / "out")
    _nowhere(tmp_path / "out")


@pytest.mark.parametrize("form", FORMS)
def test_redact_writes_no_part_of_the_key(form: str, tmp_path: Path) -> None:
    src = tmp_path / "in" / "turn.sse"
    src.parent.mkdir()
    src.write_bytes(FORMS[form]())
    redact_file(src, tmp_path / "out" / "turn.sse")
    _nowhere(tmp_path / "out")


def test_a_url_fragments_secret_params_are_secrets() -> None:
    url = f"https://app.example/cb?alt=sse#access_token={quote(KEY, safe='')}&state=abcd1"
    assert KEY in provenance.url_secrets(url)
    assert "abcd1" in provenance.url_secrets(url)  # OAuth state is a secret parameter too
