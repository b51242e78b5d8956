"""Where a capture came from, kept beside it with every credential taken out.

``turn.sse.meta.json`` records the origin (a URL, or a HAR/cassette file and
the entry in it), the HTTP status and the headers that help explain a stream
(content type, request ids). Recording and importing both write it, so both
go through the same scrubbing: credential headers are dropped by name, any
value that contains a known secret is dropped too, and key-like URL
parameters are blanked. :func:`write` checks its own output a last time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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


def _contains(text: str, secrets: Iterable[str]) -> bool:
    return any(s and len(s) >= _MIN_SECRET and s in text for s in secrets)


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
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


def scrub_url(url: str, secrets: Iterable[str] = ()) -> str:
    """The URL without user info, with key-like query values (``?key=...``) blanked."""
    secrets = list(secrets)
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    query = [
        (k, REDACTED if is_secret_name(k) or _contains(v, secrets) else v)
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


def write(path: Path, meta: Mapping[str, Any], secrets: Iterable[str] = ()) -> Path:
    """Write ``meta`` beside ``path``; refuses (writes nothing) if a secret is still in it."""
    text = json.dumps(meta, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if _contains(text, secrets):
        raise ValueError("refusing to write provenance: it still contains a secret")
    out = sidecar(path)
    out.write_text(text, encoding="utf-8")
    return out


def read(path: Path) -> dict[str, Any] | None:
    """The provenance recorded beside ``path``, or None."""
    side = sidecar(path)
    if not side.exists():
        return None
    return json.loads(side.read_text(encoding="utf-8"))


def secret_values(headers: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[str]:
    """The values of credential headers (an auth scheme word such as ``Bearer`` dropped)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    found: list[str] = []
    for name, value in items:
        if not is_secret_name(str(name)):
            continue
        for v in value if isinstance(value, list | tuple) else [value]:
            text = str(v).strip()
            scheme, _, rest = text.partition(" ")
            found.append(rest.strip() if rest and scheme.isalpha() else text)
    return [s for s in found if len(s) >= _MIN_SECRET]
