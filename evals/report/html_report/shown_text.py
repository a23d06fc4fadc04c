"""Text from a model or a server as a page shows it. Autoescaping makes `<script>` harmless, but it leaves
control characters (NUL, ESC, BEL: a model can emit them, and a raw ESC in a page is a terminal escape
waiting for `cat`) and lone surrogates (a JSON `\\ud800` the page cannot even be encoded with) as they are,
and a 1 MB answer would be copied whole into a page meant to stay a few hundred kB. So every value the
templates print passes `printable` (control characters as visible symbols, ␀ ␛ ␇ …), and long model
output is cut with `clipped`, which says how long it was."""

from __future__ import annotations

import re
from typing import Any

SHOWN_CHARS = 2000  # of one model output or error detail on the page

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _symbol(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ ␇ ␛ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"


def printable(value: Any) -> Any:
    """A string with its control characters (other than newline and tab) shown as symbols and any lone
    surrogate as U+FFFD; anything else (and markup the templates made, whose text parts came through here
    already) as it is. The templates' `finalize`."""
    if not isinstance(value, str) or hasattr(value, "__html__"):
        return value
    return _SURROGATE.sub("\ufffd", _CONTROL.sub(_symbol, value))


def clipped(text: str | None, limit: int = SHOWN_CHARS) -> str | None:
    """The first `limit` characters, and how many there were, when the text is longer."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text):,} characters; the first {limit:,} shown, all of it in samples.jsonl]"
