"""The words of a stretch of haystack, kept per chunk, are those of its text found in one scan."""

from __future__ import annotations

import re

import pytest

from ctxprobe.tasks.haystack import make_haystack, words


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(words, "CHUNK_UNITS", 16)
    monkeypatch.setattr(words, "_chunks", type(words._chunks)())


def scanned(units: list[str]) -> set[str]:
    return set(re.findall(r"[0-9A-Za-z]+", "\x00".join(units)))


@pytest.mark.parametrize("kind", ["code", "prose", "legal", "noise"])
def test_any_stretch_has_the_words_of_its_text(kind: str) -> None:
    haystack = make_haystack(kind)
    for start, n in [(0, 5), (0, 16), (3, 16), (5, 60), (16, 32), (40, 200), (31, 2), (100, 77)]:
        units = haystack.units(start, start + n)
        assert words.words_of(haystack, start, units) == scanned(units), (start, n)
        assert words.words_of(haystack, start, units) == scanned(units), (start, n)  # read from the kept chunks


def test_chunks_of_two_haystacks_are_kept_apart() -> None:
    code, prose = make_haystack("code"), make_haystack("prose")
    code_words = words.words_of(code, 0, code.units(0, 64))
    prose_units = prose.units(0, 64)
    assert words.words_of(prose, 0, prose_units) == scanned(prose_units) != code_words


def test_the_kept_chunks_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(words, "CHUNKS_KEPT", 3)
    haystack = make_haystack("prose")
    units = haystack.units(0, 160)
    assert words.words_of(haystack, 0, units) == scanned(units)
    assert len(words._chunks) == 3


class Written:
    """A haystack of given units."""

    spec = fingerprint = "written"

    def __init__(self, units: list[str]) -> None:
        self._units = units

    def units(self, start: int, stop: int) -> list[str]:
        return self._units[start:stop]

    def wrap_needle(self, sentence: str) -> str:
        return sentence


def test_characters_outside_ascii_separate_words() -> None:
    units = ["Café naïve_2024 東京x9", "ÉCOLE-42\ttab\u00a0nbsp", "\ud800lone surrogate", "a\x00b", ""] * 10
    haystack = Written(units)
    for start, n in [(0, 50), (3, 40), (17, 5)]:
        got = words.words_of(haystack, start, units[start : start + n])  # type: ignore[arg-type]
        assert got == scanned(units[start : start + n]), (start, n)
    assert got == {"Caf", "na", "ve", "2024", "x9", "COLE", "42", "tab", "nbsp", "lone", "surrogate", "a", "b"}
