"""Captures saved in the wrong container: what the first bytes of a line show them to be.

A capture that is gzip, UTF-16, an HTTP response with its headers, raw chunked transfer
framing, an HTML page or an image is not an event stream; every framing names it by the
signature people most often save by mistake, and says how to save the body instead.
"""

from __future__ import annotations

import re

_CHUNK_SIZE = re.compile(rb"[0-9a-fA-F]{1,8}(;[^\r\n]*)?\r?")
_CONTAINERS: tuple[tuple[tuple[bytes, ...], str], ...] = (
    ((b"\xff\xfe", b"\xfe\xff"), "UTF-16 text, not UTF-8 bytes: a capture saved through a text "
     "redirect (PowerShell's '>' writes UTF-16); save the raw bytes (curl -N -o FILE)"),
    ((b"\x1f\x8b",), "gzip-compressed bytes: gunzip the file first, or record with "
     "curl --compressed so the body is saved decoded"),
    ((b"HTTP/1.", b"HTTP/2", b"HTTP/3"), "an HTTP status line: the capture holds the response "
     "headers too (curl -i or -D -); save the body only (curl -N -o FILE)"),
    ((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body"), "an HTML or XML page (a gateway's "
     "error page, a login wall), not an event stream"),
    ((b"PK\x03\x04",), "a ZIP archive, not an event stream: unpack it and load the files"),
    ((b"\x89PNG", b"\xff\xd8\xff", b"%PDF"), "an image or PDF, not an event stream"),
)


def container_signature(head: bytes) -> str | None:
    """What the first bytes of a line show the capture to be, by the signature of a
    container people often save by mistake (a BOM, a magic number, a status line, a tag);
    None when they show none. Holds for a line cut short too."""
    head = head[:16].lower() if head[:1] == b"<" else head[:16]
    for starts, why in _CONTAINERS:
        if head.startswith(starts):
            return why
    return None


def wrong_container(line: bytes) -> str | None:
    """What a whole line that is no SSE field shows the capture to be: a container's
    signature, or a bare hexadecimal chunk size (only a whole line can be one: ``da`` at
    the end of a cut capture is the start of ``data:``); None when it shows nothing known."""
    known = container_signature(line)
    if known is not None:
        return known
    if _CHUNK_SIZE.fullmatch(line):
        return ("a hexadecimal chunk size: HTTP/1.1 chunked transfer framing left in the bytes "
                "(a raw socket dump); save the decoded body (curl -N -o FILE)")
    return None
