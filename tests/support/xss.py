"""Captured text that a page must show as characters and never run (the browser tests' payload)."""

from __future__ import annotations

from . import turns

IMG = "<img src=x onerror=window.__xss=1>"
SCRIPT = "<script>window.__xss=2</script>"
# The payload sits inside argument strings, cut across fragments as a provider would cut it.
HOSTILE = turns.anthropic(
    [f"Filed: {IMG}"],
    [("create_ticket", ['{"title": "', IMG[:9], IMG[9:], '", "body": "', SCRIPT[:12],
                        SCRIPT[12:], '"}'])],
)
XSS_STATE = "() => typeof window.__xss"
