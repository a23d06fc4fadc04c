"""Recognising an engine's "prompt too long" rejection (an HTTP 400, also inside a stream) and the limit
it states: each engine adapter knows its own body (runners/engines/; docs/ENGINES.md), matched by
pattern, never by whole string, since engine versions reword them."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ctxprobe.runners.engines import TooLong, adapters

__all__ = ["TooLong", "parse_too_long"]


def _text_of(body: object) -> tuple[str, str]:
    """(the error's message, the whole body as text) for a dict, nested `{"error": {...}}` or string body."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = inner.get("message")
            return (message if isinstance(message, str) else ""), json.dumps(body, default=str)
        return "", json.dumps(body, default=str)
    text = "" if body is None else str(body)
    return text, text


def parse_too_long(body: object, message: str = "") -> TooLong | None:
    """A `TooLong` when the error body (or message) is a context-length rejection of any known engine."""
    body_message, whole = _text_of(body)
    text = f"{message}\n{whole}"
    shown = (body_message or message or whole).strip()[:500]
    for engine in adapters():
        found = engine.parse_too_long(body, text, shown)
        if found is not None:
            return found
    return None
