"""What a server said, as ctxprobe shows it: one line. An error page in HTML, a body with NUL or escape bytes
(a server that is not HTTP at all) or a stack trace of many lines would otherwise be pasted into the terminal,
the record and the manifest as it came; here tags are dropped, entities read, control characters written as
escapes, runs of white space made one space, and the whole cut at a fixed length."""

from __future__ import annotations

import html
import json
import re

SHOWN_CHARS = 300  # how much of a server's answer a message quotes

_HTML = re.compile(r"<\s*(!doctype|html|head|body|title|h1|p|pre|div|center|hr)\b", re.IGNORECASE)
_HIDDEN = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")  # tab, line ends and feeds are white space


def one_line(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` as one printable line of at most `limit` characters (an ellipsis marks a cut)."""
    if _HTML.search(text):
        text = html.unescape(_TAG.sub(" ", _HIDDEN.sub(" ", text)))
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def shown_body(body: object, limit: int = SHOWN_CHARS) -> str:
    """A response body (decoded JSON or raw text) as `one_line` shows it."""
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    return one_line(text, limit)
