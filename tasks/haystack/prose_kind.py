"""The `prose` haystack kind: English prose (`prose.py`), or `prose:zh`, Chinese prose (`prose_zh.py`, a
subclass of the English one). Registered apart from both so that neither imports the other back."""

from __future__ import annotations

from functools import cache

from ctxprobe.tasks.haystack.base import Haystack, haystack_kind, no_argument
from ctxprobe.tasks.haystack.prose import ProseHaystack
from ctxprobe.tasks.haystack.prose_zh import make_prose_zh


@haystack_kind("prose")
@cache
def make_prose(arg: str | None) -> Haystack:
    """`prose`, or `prose:zh` (Chinese prose, `tasks.haystack.prose_zh`)."""
    if arg == "zh":
        return make_prose_zh()
    no_argument("prose", arg)
    return ProseHaystack()
