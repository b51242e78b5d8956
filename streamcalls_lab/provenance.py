"""Where a capture came from, kept beside it with every credential taken out.

``turn.sse.meta.json`` records the origin (a URL, or a HAR/cassette file and
the entry in it), the HTTP status and the headers that help explain a stream
(content type, request ids). Recording and importing both write it, so both
go through the same scrubbing: credential headers are dropped by name, any
value that contains a known secret is dropped too, and key-like URL
parameters are blanked. :func:`write` checks its own output a last time.

The secrets of an exchange (:func:`exchange_secrets`) are every value of every
credential its request carried, whole and in the parts a server may echo alone:
a bearer token; a Basic credential, decoded, and its user and password; a SigV4
``Authorization``'s ``Signature`` and ``Credential`` (with its access key id);
each cookie of a ``Cookie`` header and the value a ``Set-Cookie`` sets; the values
of ``x-api-key``, ``api-key``, ``x-goog-api-key``, ``x-amz-security-token`` and
every other credential-named header; a WebSocket subprotocol that carries one
(``openai-insecure-api-key.<key>``); secret-named query (and URL fragment) parameters; and values
under secret-named keys of a JSON or form-encoded (``api_key=``, ``key=``) body.
Each is looked for in every form a stream can carry it (:mod:`.echoes`): raw, JSON-escaped
in any mix, URL-quoted, base64, and split across frames and fragments.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote_plus, urlencode, urlsplit, urlunsplit

from . import echoes

SUFFIX = ".meta.json"
REDACTED = "REDACTED"
_SECRET_NAME = re.compile(
    r"auth|key|token|secret|cookie|session|signature|password|credential|organization|project",
    re.IGNORECASE,
)
_HARMLESS_NAME = re.compile(r"ratelimit", re.IGNORECASE)
_MIN_SECRET = 4  # shorter "secrets" would blank ordinary words


def is_secret_name(name: str) -> bool:
    """Whether a header or URL parameter name can carry a credential (``Authorization``, ...)."""
    return bool(_SECRET_NAME.search(name)) and not _HARMLESS_NAME.search(name)


def secret_forms(secret: str) -> set[str]:
    """The ways ``secret`` can appear where it is echoed: raw, JSON-escaped (``/`` as
    ``\\/`` too) and URL-quoted."""
    escaped = json.dumps(secret)[1:-1]
    return {secret, escaped, escaped.replace("/", "\\/"), quote(secret, safe="")}


def _contains(text: str, secrets: Iterable[str]) -> bool:
    return echoes.find(text.encode("utf-8", "surrogatepass"), secrets) is not None


def scrub_headers(
    headers: Mapping[str, Any] | Iterable[tuple[str, Any]], secrets: Iterable[str] = ()
) -> dict[str, str]:
    """Headers safe to keep, names lower-cased; several values of one name are joined by ``, ``."""
    secrets = list(secrets)
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for name, value in items:
        key = str(name).lower()
        values = value if isinstance(value, list | tuple) else [value]
        text = ", ".join(str(v) for v in values)
        if is_secret_name(key) or _contains(text, secrets):
            continue
        if "://" in text and "?" in text:  # Location, Link...: a URL's query can carry a key
            text = ", ".join(scrub_url(v.strip(), secrets) if "://" in v else v
                             for v in text.split(", "))
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


SAFE_PARAMS = frozenset(("alt", "api-version", "api_version", "stream", "beta", "format",
                         "version", "model", "deployment", "region", "n"))
"""URL parameters whose values are kept (they explain a stream); every other value is blanked."""
_SECRET_PARAM = re.compile(
    r"^(?:code|sig|jwt|otp|nonce|state|pass|pwd|ticket|assertion|hmac|hash|x-amz-.*|"
    r"x-goog-.*|se|sp|sv|st|skoid|sktid)$", re.IGNORECASE
)  # OAuth codes, JWTs, presigned URLs (S3 X-Amz-*, GCS X-Goog-*, Azure SAS sig/se/sp/...)


def is_secret_param(name: str) -> bool:
    """Whether a URL parameter can carry a credential (``key``, ``sig``, ``code``...)."""
    return is_secret_name(name) or bool(_SECRET_PARAM.match(name))


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries: its password and its secret-named parameters' values."""
    parts = urlsplit(url)
    found = [parts.password or ""]
    for params in (parts.query, parts.fragment):  # implicit OAuth: #access_token=...
        found += [v for k, v in parse_qsl(params, keep_blank_values=True)
                  if is_secret_param(k)]
    return [s for s in found if len(s) >= _MIN_SECRET]


_JSON_PAIR = re.compile(rb'"((?:[^"\\\r\n]|\\.){1,200})"\s*:\s*"((?:[^"\\\r\n]|\\.)*)"')
_FORM_PAIR = re.compile(rb"(?:^|[&;\s])([A-Za-z0-9_.~%\-\[\]]{1,200})=([^&;\s]*)")


def body_secrets(text: str | bytes | None, form: bool | None = None) -> list[str]:
    """Values under secret-named keys of a request body: a JSON one (``{"api_key": ...}``,
    at any depth), or a form-encoded one (``api_key=...&key=...``, ``form``; None: decided
    by the body, JSON when it starts with ``{`` or ``[``). JSON that does not parse (cut
    off, or nested deeper than the parser goes) is searched for its ``"key": "value"``
    pairs instead."""
    if not text:
        return []
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if form is None:
        form = raw.lstrip()[:1] not in (b"{", b"[")
    if form:
        found = [unquote_plus(v.decode("latin-1")) for k, v in _FORM_PAIR.findall(raw)
                 if is_secret_param(unquote_plus(k.decode("latin-1")))]
        return [s for s in found if len(s) >= _MIN_SECRET]
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        return _json_pairs(raw)
    found: list[str] = []
    stack = [payload]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, str) and is_secret_name(str(k)) and len(v) >= _MIN_SECRET:
                    found.append(v)
                else:
                    stack.append(v)
        elif isinstance(value, list):
            stack += value
    return found


def _json_pairs(raw: bytes) -> list[str]:
    found = []
    for k, v in _JSON_PAIR.findall(raw):
        try:
            key, value = json.loads(b'"' + k + b'"'), json.loads(b'"' + v + b'"')
        except ValueError:
            continue
        if is_secret_name(key) and len(value) >= _MIN_SECRET:
            found.append(value)
    return found


def scrub_body(body: bytes, secrets: Iterable[str]) -> tuple[bytes, int]:
    """``body`` with every contiguous spelling of a secret (raw, JSON-escaped character by
    character in any mix, URL-quoted, base64 at any alignment: :func:`.echoes.scrub`)
    replaced by as many ``x``, so every length stays; and how many were replaced."""
    return echoes.scrub(body, secrets)


def scrub_url(url: str, secrets: Iterable[str] = ()) -> str:
    """The URL without user info, with every query value blanked but :data:`SAFE_PARAMS`'
    (``?key=...``, ``code=``, ``sig=``: all of them, whatever they are called)."""
    secrets = list(secrets)
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    query = [
        (k, v if k.lower() in SAFE_PARAMS and not _contains(v, secrets) else REDACTED)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    path = parts.path
    for s in secrets:
        if s and len(s) >= _MIN_SECRET:
            path = path.replace(s, REDACTED)
    return urlunsplit((parts.scheme, host, path, urlencode(query), ""))


def fingerprint(secret: str) -> str:
    """A short digest that can confirm which secret was used without revealing it."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()[:16]


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def exchange(
    source: str,
    url: str,
    method: str,
    status: int,
    sent: Mapping[str, Any] | Iterable[tuple[str, Any]],
    received: Mapping[str, Any] | Iterable[tuple[str, Any]],
    secrets: Iterable[str] = (),
    *,
    cut_off: str | None = None,
    **more: Any,
) -> dict[str, Any]:
    """The provenance of one recorded HTTP exchange (``record``, ``proxy``): the URL, both
    sides' headers scrubbed, when, and ``cut_off`` when the body broke off; ``more`` added."""
    secrets = list(secrets)
    meta: dict[str, Any] = {
        "source": source,
        "url": scrub_url(url, secrets),
        "method": method,
        "status": status,
        **more,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "request_headers": scrub_headers(sent, secrets),
        "response_headers": scrub_headers(received, secrets),
    }
    if cut_off:
        meta["cut_off"] = cut_off
    return meta


def write(path: Path, meta: Mapping[str, Any], secrets: Iterable[str] = ()) -> Path:
    """Write ``meta`` beside ``path``; refuses (writes nothing) if a secret is still in it."""
    text = json.dumps(meta, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if _contains(text, secrets):
        raise ValueError("refusing to write provenance: it still contains a secret")
    out = sidecar(path)
    out.write_text(text, encoding="utf-8")
    return out


REQUEST_SUFFIX = ".request.json"
"""``turn.sse.request.json``: the JSON request body (tools, messages, model) the stream
answered, credentials taken out; written by the proxy beside each capture."""
MAX_REQUEST_BYTES = 8 << 20
"""A larger request body is not kept (its size is noted in the provenance instead)."""


def request_sidecar(path: Path) -> Path:
    return path.with_name(path.name + REQUEST_SUFFIX)


def _blank_secret_keys(value: Any) -> Any:
    """``value`` with every value under a secret-named key replaced by :data:`REDACTED`."""
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and is_secret_name(k) and v not in ("", None)
                else _blank_secret_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank_secret_keys(v) for v in value]
    return value


def write_request(path: Path, body: bytes, secrets: Iterable[str] = ()) -> str | None:
    """Keep the JSON request ``body`` beside the capture ``path``, credentials taken out:
    values under secret-named keys blanked, then every spelling of every known secret
    (:func:`.echoes.scrub`), then one last search of what would be written; anything left
    and nothing is written. Returns None when written, else why not (for the provenance)."""
    secrets = list(secrets)
    if not body:
        return "the request had no body"
    if len(body) > MAX_REQUEST_BYTES:
        return f"the request body ({len(body):,} bytes) is larger than {MAX_REQUEST_BYTES:,}"
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return "the request body is not JSON"
    text = json.dumps(_blank_secret_keys(payload), indent=1, ensure_ascii=False) + "\n"
    data, _ = echoes.scrub(text.encode("utf-8", "surrogatepass"), secrets)
    if echoes.find(data, secrets) is not None:
        return "the request body still held a credential after scrubbing"
    side = request_sidecar(path)
    tmp = side.with_name(side.name + ".partial")
    tmp.write_bytes(data)
    tmp.replace(side)
    return None


def read(path: Path) -> dict[str, Any] | None:
    """The provenance recorded beside ``path``, or None."""
    side = sidecar(path)
    if not side.exists():
        return None
    return json.loads(side.read_text(encoding="utf-8"))


def secret_values(headers: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[str]:
    """The values of credential headers, each whole and in its parts (see the module
    docstring; an auth scheme word such as ``Bearer`` dropped)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    found: list[str] = []
    for name, value in items:
        key = str(name).lower()
        if key == "sec-websocket-protocol":  # a browser cannot set Authorization on a socket
            found += [s for v in (value if isinstance(value, list | tuple) else [value])
                      for s in _subprotocol_secrets(str(v))]
        if not is_secret_name(key):
            continue
        for v in value if isinstance(value, list | tuple) else [value]:
            found += _parts(key, str(v).strip())
    return list(dict.fromkeys(s for s in found if len(s) >= _MIN_SECRET))


def _subprotocol_secrets(value: str) -> list[str]:
    """Credentials a WebSocket client offers as subprotocols, ``<name>.<value>`` with a
    secret-named name (OpenAI Realtime's ``openai-insecure-api-key.sk-...``,
    ``openai-organization.org-...``): each token whole and its value."""
    found = []
    for token in value.split(","):
        name, dot, rest = token.strip().partition(".")
        if dot and rest and is_secret_name(name):
            found += [token.strip(), rest]
    return found


_PUBLIC_PARAMS = frozenset(("signedheaders", "realm", "algorithm", "qop"))
"""Parameters of an auth header that name how it was made, not a secret."""
_AUTH_PARAM = re.compile(r"([A-Za-z0-9_\-]+)=(\"[^\"]*\"|[^,\s]*)")


def _parts(name: str, text: str) -> list[str]:
    """``text``, a credential header's value, and the parts of it a server may echo."""
    found = [text]
    if name in ("cookie", "set-cookie"):
        pairs = text.split(";") if name == "cookie" else text.split(";")[:1]
        for pair in pairs:
            _, eq, v = pair.strip().partition("=")
            if eq:
                found += [v.strip(), v.strip().strip('"')]
        return found
    scheme, _, rest = text.partition(" ")
    rest = rest.strip()
    if not (rest and scheme.replace("-", "").isalnum()):
        return found
    found = [rest]  # the scheme word is no secret
    if scheme.lower() == "basic":
        try:
            plain = base64.b64decode(rest, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            plain = ""
        found += [plain, *plain.split(":", 1)] if plain else []
    for param, v in _AUTH_PARAM.findall(rest):  # SigV4, Digest and other parameters
        v = v.strip('"')
        if param.lower() in _PUBLIC_PARAMS:
            continue
        found.append(v)
        if param.lower() == "credential":  # AKID/date/region/service/aws4_request
            found.append(v.split("/", 1)[0])
    return found


Headers = Mapping[str, Any] | Iterable[tuple[str, Any]]


def exchange_secrets(url: str, body: str | bytes | None, *headers: Headers) -> list[str]:
    """Every credential one HTTP exchange carries: the values of credential headers (of each
    header set given), the URL's, and those under secret-named keys of its JSON body."""
    found = [s for h in headers for s in secret_values(h)]
    return found + url_secrets(url) + body_secrets(body)
