"""provenance: the sidecar that says where a capture came from, with credentials taken out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamcalls_lab import provenance


def test_credential_headers_are_dropped_by_name() -> None:
    kept = provenance.scrub_headers({
        "Authorization": "Bearer abc", "x-api-key": "k", "api-key": "k", "Cookie": "a=b",
        "Set-Cookie": "a=b", "x-goog-api-key": "k", "OpenAI-Organization": "org-1",
        "Content-Type": "text/event-stream", "request-id": "req_1",
        "anthropic-ratelimit-tokens-remaining": "100",
    })
    assert kept == {"content-type": "text/event-stream", "request-id": "req_1",
                    "anthropic-ratelimit-tokens-remaining": "100"}


def test_a_header_whose_value_holds_a_known_secret_is_dropped() -> None:
    kept = provenance.scrub_headers([("x-debug", "sent with sk-abcdef123")], ["sk-abcdef123"])
    assert kept == {}


def test_repeated_header_values_are_joined() -> None:
    assert provenance.scrub_headers({"Vary": ["Origin", "Referer"]}) == {"vary": "Origin, Referer"}


def test_urls_lose_user_info_and_key_like_parameters() -> None:
    url = "https://user:pw@example.com:8443/v1/x?key=AIza123&alt=sse&access_token=t"
    assert provenance.scrub_url(url) == (
        "https://example.com:8443/v1/x?key=REDACTED&alt=sse&access_token=REDACTED")


def test_secret_values_strip_the_auth_scheme() -> None:
    found = provenance.secret_values({"Authorization": "Bearer sk-live-1234", "accept": "x"})
    assert found == ["sk-live-1234"]


def test_fingerprint_is_stable_and_does_not_contain_the_secret() -> None:
    fp = provenance.fingerprint("sk-live-1234")
    assert fp == provenance.fingerprint("sk-live-1234") != provenance.fingerprint("sk-live-1235")
    assert "sk-live" not in fp


def test_write_refuses_metadata_that_still_holds_a_secret(tmp_path: Path) -> None:
    path = tmp_path / "x.sse"
    with pytest.raises(ValueError, match="secret"):
        provenance.write(path, {"note": "key sk-live-1234"}, ["sk-live-1234"])
    assert not provenance.sidecar(path).exists()


def test_write_then_read(tmp_path: Path) -> None:
    path = tmp_path / "x.sse"
    provenance.write(path, {"status": 200})
    assert provenance.read(path) == {"status": 200}
    assert provenance.sidecar(path).name == "x.sse.meta.json"


def test_an_exchange_keeps_no_secret_from_the_url_or_either_sides_headers() -> None:
    key = "sk-exchange-test-1a2b3c"
    meta = provenance.exchange(
        "proxy", f"https://h/v1/m?key={key}&alt=sse", "POST", 200,
        [("authorization", f"Bearer {key}"), ("accept", "text/event-stream")],
        {"x-echo": f"bad {key}", "content-type": "text/event-stream"}, [key],
        cut_off="upstream: IncompleteRead", model="m")
    assert key not in json.dumps(meta)
    assert meta["url"] == "https://h/v1/m?key=REDACTED&alt=sse"
    assert meta["request_headers"] == {"accept": "text/event-stream"}
    assert meta["response_headers"] == {"content-type": "text/event-stream"}
    assert (meta["model"], meta["cut_off"]) == ("m", "upstream: IncompleteRead")
