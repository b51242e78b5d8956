"""Hypothesis over what reaches a terminal and what counts as a secret (issue #22): any bytes,
cut into reads anywhere, replay to a terminal with nothing that acts; any cookie, Basic or
SigV4 credential has each of its parts found; any read time either sleeps out or is refused."""

from __future__ import annotations

import base64
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcalls_lab import CaptureError, provenance, timing
from streamcalls_lab.display import InertStream, hidden
from streamcalls_lab.traffic.replay import reads

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
_ACTING = [b"\x1b[2J", b"\x1b]0;t\x07", b"\xc2\x9b", b"\xe2\x80\xae", b"\r", b"\n", b"\r\n",
           b"\t", b"\\", b"\xff", b"\xe2\x82", b"\x00", b"data: ", "é".encode()]
streams = st.lists(st.one_of(st.sampled_from(_ACTING), st.binary(max_size=6)),
                   max_size=12).map(b"".join)
token = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.",
                min_size=4, max_size=24)


@FUZZ
@given(data=streams, cuts=st.lists(st.integers(0, 80), max_size=6))
def test_nothing_replayed_to_a_terminal_acts(data: bytes, cuts: list[int]) -> None:
    shown, out, at = InertStream(), [], 0
    for cut in sorted(cuts):
        out.append(shown.feed(data[at:cut]))
        at = max(at, cut)
    text = "".join(out) + shown.feed(data[at:], final=True)
    for i, ch in enumerate(text):
        if ch == "\r":
            assert text[i + 1:i + 2] == "\n"
        elif ch not in "\n\t":
            assert not hidden(ch), repr(ch)


@FUZZ
@given(values=st.lists(token, min_size=1, max_size=4))
def test_every_cookie_value_is_a_secret(values: list[str]) -> None:
    header = "; ".join(f"c{i}={v}" for i, v in enumerate(values))
    assert set(values) <= set(provenance.secret_values([("Cookie", header)]))


@FUZZ
@given(user=token, password=token)
def test_a_basic_credentials_user_and_password_are_secrets(user: str, password: str) -> None:
    value = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    assert {user, password} <= set(provenance.secret_values([("Authorization", value)]))


@FUZZ
@given(akid=token, signature=token)
def test_a_sigv4_access_key_id_and_signature_are_secrets(akid: str, signature: str) -> None:
    value = (f"AWS4-HMAC-SHA256 Credential={akid}/20260101/us-east-1/bedrock/aws4_request, "
             f"SignedHeaders=host;x-amz-date, Signature={signature}")
    assert {akid, signature} <= set(provenance.secret_values([("Authorization", value)]))


@FUZZ
@given(t=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**6)))
def test_a_read_time_is_slept_out_or_refused(t: float) -> None:
    try:
        got = reads([(0.0, b"data: 1\n\n"), (t, b"data: 2\n\n")])
    except CaptureError as e:
        assert "read 2" in str(e)
        return
    assert math.isfinite(got[1].t) and 0 <= got[1].t <= timing.MAX_SECONDS
