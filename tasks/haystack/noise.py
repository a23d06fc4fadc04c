"""The `noise` haystack: RULER's repeated five sentences, the easy baseline. `noise` is one sentence a
unit; `noise:ruler` lays it out as RULER's `repeat` haystack does: the five sentences as one block, one
block per line, needles on lines of their own."""

from __future__ import annotations

from functools import cache

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack.base import (
    Haystack,
    check_range,
    fingerprint_of,
    haystack_kind,
)

SENTENCES = (
    " The grass is green.",
    " The sky is blue.",
    " The sun is yellow.",
    " Here we go.",
    " There and back again.",
)
VERSION = "1"


class NoiseHaystack:
    """Unit i is sentence i mod 5; every unit starts with " "."""

    def __init__(self) -> None:
        self.spec = "noise"
        self.fingerprint = fingerprint_of("ctxprobe-haystack", "noise", VERSION)

    def units(self, start: int, stop: int) -> list[str]:
        check_range(start, stop)
        n = len(SENTENCES)
        first = start % n
        whole = list(SENTENCES[first:] + SENTENCES[:first]) * ((stop - start) // n + 1)
        return whole[: stop - start]

    def wrap_needle(self, sentence: str) -> str:
        return " " + sentence.strip()


class RulerNoiseHaystack:
    """Unit i is the whole block on a line of its own (every unit starts with "\\n")."""

    BLOCK = "\n" + "".join(SENTENCES).strip()

    def __init__(self) -> None:
        self.spec = "noise:ruler"
        self.fingerprint = fingerprint_of("ctxprobe-haystack", "noise:ruler", VERSION)

    def units(self, start: int, stop: int) -> list[str]:
        check_range(start, stop)
        return [self.BLOCK] * (stop - start)

    def wrap_needle(self, sentence: str) -> str:
        return "\n" + sentence.strip()


@haystack_kind("noise")
@cache
def make_noise(arg: str | None) -> Haystack:
    if arg == "ruler":
        return RulerNoiseHaystack()
    if arg is not None:
        raise UserError(f"haystack 'noise' takes no argument but 'ruler' (RULER's layout), got noise:{arg}")
    return NoiseHaystack()
