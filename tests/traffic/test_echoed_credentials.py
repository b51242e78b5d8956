"""Echoed credentials (issue #22): every value of every credential a request carried,
whole and in its parts (a Basic credential decoded, its user and password; a SigV4
signature and access key id; each cookie; form-encoded and query keys), echoed back by a
server in its body or its headers, is in nothing the proxy, record, serve's request log
or import write."""

from __future__ import annotations

import base64
import http.client
import json
import math
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from streamcalls_lab import provenance
from streamcalls_lab.importers import import_file
from streamcalls_lab.traffic.proxy import RecordingProxy
from streamcalls_lab.traffic.record import RecordError, record
from streamcalls_lab.traffic.serve import SSEServer
from streamcalls_lab.traffic.server import LoopbackServer

from ..support import turns
from ..support.stream_handler import StreamHandler

TIMEOUT = 20
BASIC = ("alice-user", "hunter2-pass")
AKID = "AKIAECHOTEST4567"
SIGNATURE = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
SCOPE = f"{AKID}/20260101/us-east-1/bedrock/aws4_request"
CASES: dict[str, tuple[str, dict[str, str], bytes, list[str]]] = {
    # name: (path, request headers, request body, the parts a server may echo alone)
    "bearer": ("/v1/messages", {"authorization": "Bearer sk-bearer-echo-0001"}, b"{}",
               ["sk-bearer-echo-0001"]),
    "basic": ("/v1/messages", {"authorization": "Basic " + base64.b64encode(
        ":".join(BASIC).encode()).decode()}, b"{}", [*BASIC, ":".join(BASIC)]),
    "x-api-key": ("/v1/messages", {"x-api-key": "sk-ant-echo-0002"}, b"{}",
                  ["sk-ant-echo-0002"]),
    "api-key": ("/v1/messages", {"api-key": "azure-echo-0003"}, b"{}", ["azure-echo-0003"]),
    "x-goog-api-key": ("/v1/messages", {"x-goog-api-key": "AIzaEcho-0004"}, b"{}",
                       ["AIzaEcho-0004"]),
    "x-amz-security-token": ("/v1/messages", {"x-amz-security-token": "FwoGZXIvYXdzEcho0005"},
                             b"{}", ["FwoGZXIvYXdzEcho0005"]),
    "sigv4": ("/model/m/invoke-with-response-stream", {
        "authorization": f"AWS4-HMAC-SHA256 Credential={SCOPE}, "
                         f"SignedHeaders=host;x-amz-date, Signature={SIGNATURE}",
        "x-amz-date": "20260101T000000Z"}, b"{}", [AKID, SIGNATURE, SCOPE]),
    "cookie": ("/v1/messages", {"cookie": "session=cookie-one-0006; pref=cookie-two-0007"},
               b"{}", ["cookie-one-0006", "cookie-two-0007"]),
    "query api_key": ("/v1/messages?api_key=query-echo-0008&alt=sse", {}, b"{}",
                      ["query-echo-0008"]),
    "query key": ("/v1/messages?key=query-echo-0009", {}, b"{}", ["query-echo-0009"]),
    "form body": ("/v1/messages", {"content-type": "application/x-www-form-urlencoded"},
                  b"model=m&api_key=form-echo-0010&key=form%2Becho-0011",
                  ["form-echo-0010", "form+echo-0011"]),
    "json body": ("/v1/messages", {}, b'{"model": "m", "auth": {"api_key": "json-echo-0012"}}',
                  ["json-echo-0012"]),
}
EACH = [(case, part) for case, (_, _, _, parts) in CASES.items() for part in parts]
IDS = [f"{case}:{part[:12]}" for case, part in EACH]
FORMS = {"raw": lambda s: s, "json-escaped": lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),
         "url-quoted": lambda s: quote(s, safe="")}


def _everything(root: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def _absent(part: str, root: Path) -> None:
    written = _everything(root)
    for name, form in FORMS.items():
        assert form(part).encode() not in written, f"{name} {part!r} written"


class _Echo(StreamHandler):
    """Answers every request with a stream that quotes ``server.owner.echo`` back, in its
    body and in a header, as a gateway's error can."""

    def answer(self) -> None:
        echo = self.server.owner.echo  # type: ignore[attr-defined]
        body = turns.anthropic(text=["Hi"]) + ("event: error\ndata: " + json.dumps(
            {"error": {"message": f"bad credential {echo}"}}) + "\n\n").encode()
        self.stream(body, x_echo=quote(echo, safe=""))


@pytest.fixture
def echo_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer(_Echo, "127.0.0.1", 0)
    with server:
        yield server


def _send(base: str, path: str, headers: dict[str, str], body: bytes) -> bytes:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    conn.request("POST", path, body=body, headers=headers)
    try:
        return conn.getresponse().read()
    finally:
        conn.close()


@pytest.mark.parametrize(("case", "part"), EACH, ids=IDS)
def test_the_proxy_writes_no_part_of_a_credential_a_server_echoes(
    case: str, part: str, echo_server: LoopbackServer, tmp_path: Path,
) -> None:
    path, headers, body, _ = CASES[case]
    echo_server.echo = part  # type: ignore[attr-defined]
    with RecordingProxy(echo_server.base_url, tmp_path) as proxy:
        answer = _send(proxy.base_url, path, headers, body)
    assert json.dumps(part)[1:-1].encode() in answer  # the client gets the echo unchanged
    assert list(tmp_path.glob("*.meta.json"))  # the exchange was recorded
    _absent(part, tmp_path)


@pytest.mark.parametrize(("case", "part"), EACH, ids=IDS)
def test_serve_logs_no_part_of_a_credential_a_client_sent(case: str, part: str) -> None:
    path, headers, body, _ = CASES[case]
    with SSEServer(turns.anthropic(text=["Hi"]), speed=math.inf) as server:
        _send(server.base_url, path, headers, body)
        log = repr([(r, r.body) for r in server.requests])  # repr leaves the body out
    for name, form in FORMS.items():
        assert form(part) not in log, f"{name} {part!r} in the request log"


@pytest.mark.parametrize("body", [b'{"api_key": "record-echo-0013"}',
                                  b"api_key=record-echo-0013&x=1"], ids=["json", "form"])
def test_record_saves_nothing_that_echoes_a_key_in_its_request_body(
    body: bytes, echo_server: LoopbackServer, tmp_path: Path,
) -> None:
    echo_server.echo = "record-echo-0013"  # type: ignore[attr-defined]
    with pytest.raises(RecordError, match="credential"):
        record(echo_server.base_url + "/v1/messages", body, tmp_path / "x.sse", key_env=None)
    _absent("record-echo-0013", tmp_path)


def _echoing(parts: list[str]) -> str:
    return turns.anthropic(text=["Hi"]).decode() + "".join(
        "event: error\ndata: " + json.dumps({"error": {"message": f"echo {p}"}}) + "\n\n"
        for p in parts)


COOKIES = ["cookie-req-0014", "cookie-req-0015"]
SET_COOKIE = "set-cookie-0016"


def test_import_scrubs_cookie_and_set_cookie_values_a_vcr_body_echoes(tmp_path: Path) -> None:
    data = {"interactions": [{
        "request": {"method": "POST", "uri": "https://api.example.com/v1/chat", "body": "{}",
                    "headers": {"Cookie": [f"a={COOKIES[0]}; b={COOKIES[1]}"]}},
        "response": {"status": {"code": 200},
                     "headers": {"Content-Type": ["text/event-stream"],
                                 "Set-Cookie": [f"sid={SET_COOKIE}; Path=/; HttpOnly"]},
                     "body": {"string": _echoing([*COOKIES, SET_COOKIE])}}}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    [out] = import_file(path, tmp_path / "out")
    for part in [*COOKIES, SET_COOKIE]:
        _absent(part, tmp_path / "out")
    assert "scrubbed" in (provenance.read(out) or {})


def test_import_scrubs_basic_and_sigv4_parts_a_har_body_echoes(tmp_path: Path) -> None:
    basic = base64.b64encode(":".join(BASIC).encode()).decode()
    parts = [*BASIC, AKID, SIGNATURE]
    har = {"log": {"entries": [{
        "request": {"method": "POST", "url": "https://api.example.com/v1/chat",
                    "headers": [{"name": "Authorization", "value": f"Basic {basic}"},
                                {"name": "Proxy-Authorization", "value":
                                 f"AWS4-HMAC-SHA256 Credential={SCOPE}, "
                                 f"SignedHeaders=host, Signature={SIGNATURE}"}]},
        "response": {"status": 200,
                     "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                     "content": {"mimeType": "text/event-stream", "text": _echoing(parts)}},
    }]}}
    path = tmp_path / "h.har"
    path.write_text(json.dumps(har))
    import_file(path, tmp_path / "out")
    for part in parts:
        _absent(part, tmp_path / "out")


@pytest.mark.parametrize(("header", "value", "parts"), [
    ("Authorization", "Basic " + base64.b64encode(b"bob-the-user:pw-secret-1").decode(),
     ["bob-the-user", "pw-secret-1", "bob-the-user:pw-secret-1"]),
    ("Authorization", f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders=host, "
                      f"Signature={SIGNATURE}", [AKID, SIGNATURE, SCOPE]),
    ("Cookie", "a=first-cookie-1; b=\"second-cookie-2\"", ["first-cookie-1", "second-cookie-2"]),
    ("Set-Cookie", "sid=set-cookie-3; Path=/; HttpOnly", ["set-cookie-3"]),
], ids=["basic", "sigv4", "cookie", "set-cookie"])
def test_a_credential_headers_parts_are_each_a_secret(
    header: str, value: str, parts: list[str],
) -> None:
    found = provenance.secret_values([(header, value)])
    assert value.split(" ", 1)[-1] in found or value in found
    assert set(parts) <= set(found)
    assert "host" not in found  # SignedHeaders names headers, it is no secret


def test_import_scrubs_a_key_in_a_ruby_vcr_request_body_mapping(tmp_path: Path) -> None:
    key = "ruby-vcr-key-0017"  # Ruby's VCR keeps a request body as {encoding, string}
    data = {"interactions": [{
        "request": {"method": "POST", "uri": "https://api.example.com/v1/chat", "headers": {},
                    "body": {"encoding": "UTF-8", "string": json.dumps({"api_key": key})}},
        "response": {"status": {"code": 200}, "headers": {"Content-Type": ["text/event-stream"]},
                     "body": {"string": _echoing([key])}}}]}
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data))
    import_file(path, tmp_path / "out")
    _absent(key, tmp_path / "out")


def test_import_scrubs_a_key_in_a_har_form_bodys_params(tmp_path: Path) -> None:
    key = "har-param-key-0018"  # postData as parsed params, with no text
    har = {"log": {"entries": [{
        "request": {"method": "POST", "url": "https://api.example.com/v1/chat", "headers": [],
                    "postData": {"mimeType": "application/x-www-form-urlencoded",
                                 "params": [{"name": "api_key", "value": key}]}},
        "response": {"status": 200,
                     "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                     "content": {"mimeType": "text/event-stream", "text": _echoing([key])}},
    }]}}
    path = tmp_path / "h.har"
    path.write_text(json.dumps(har))
    import_file(path, tmp_path / "out")
    _absent(key, tmp_path / "out")
