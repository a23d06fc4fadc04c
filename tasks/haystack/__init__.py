"""Haystacks: the filler text long prompts are made of, generated offline and deterministically.

`make_haystack("prose")` gives a haystack whose `units(start, stop)` are sentence- or line-sized pieces of
text, each beginning with its own separator, so that a prompt's token count is the sum of its units'.
"""

from ctxprobe.tasks.haystack import code_kind, legal, needle, noise, prose_kind, user_text
from ctxprobe.tasks.haystack.base import Haystack, haystack_kind, known_kinds, make_haystack

__all__ = ["Haystack", "haystack_kind", "known_kinds", "make_haystack"]
