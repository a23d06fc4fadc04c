"""The `noise` haystack: RULER's repeated five sentences, the easy baseline."""

from __future__ import annotations

from functools import cache

from ctxprobe.tasks.haystack.base import (
    Haystack,
    check_range,
    fingerprint_of,
    haystack_kind,
    no_argument,
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


@haystack_kind("noise")
@cache
def make_noise(arg: str | None) -> Haystack:
    no_argument("noise", arg)
    return NoiseHaystack()
