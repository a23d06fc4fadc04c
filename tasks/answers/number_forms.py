"""Numbers in one canonical form: the digits a reader takes the text to name, however they are written.

A number is written in many ways a reader reads as the same number, so a scorer reads them all as one
(`canonical_numbers`), on both sides: the expected value and every number the answer offers.

- digits in groups of 1 to 4 joined by one separator: spaces (plain, no-break, thin, figure), `.`, `,`, `_`,
  `'`, a hyphen, a non-breaking hyphen, an en dash, a minus sign or a slash (`765 4321`, `3.569.986`,
  `765-4321`, `765/4321`): one number of all their digits; longer runs stand alone (`1234567-7654321` is two);
- scientific notation whose value is whole (`7.654321e6`, `7.654321 x 10^6`, `7.654321 × 10**6`);
- an ordinal suffix (`7654321st`, `7654321th`);
- spelled out in English words (`seven million six hundred fifty-four thousand three hundred twenty-one`) or
  digit by digit (`seven six five four three two one`), and a number times a scale word (`7.654321 million`).
  One number word alone under ten is not read (`one of them`, `two values`).

HTML entities (`&#55;`) and the comparison characters (`fold.py`: fullwidth and other scripts' digits) are
read before any of this (`reading.py` unescapes and folds the slot)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["canonical_numbers", "spell_out"]

_SEPARATORS = " \u00a0\u2007\u2009\u202f._,'\u2019/\\-\u2010\u2011\u2012\u2013\u2212"
_EDGE_BEFORE = r"(?<![0-9A-Za-z_])"
_EDGE_AFTER = r"(?:st|nd|rd|th)?(?![0-9A-Za-z_])"
_SEP = "[" + re.escape(_SEPARATORS) + "]"
_NUMBER = re.compile(rf"{_EDGE_BEFORE}(?:\d{{5,}}\.\d+(?![\d.])|\d{{1,4}}(?:{_SEP}\d{{1,4}})+|\d+){_EDGE_AFTER}")
# the plain ways to write a number: its digits, with thousands commas or not (`1234567`, `1,234,567`)
_PLAIN = re.compile(r"\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+")
_SPELLED_MARK = "\x00"  # before digits spell_out wrote: a number in words is read, never plain
_SCIENTIFIC = re.compile(
    rf"{_EDGE_BEFORE}(\d+(?:\.\d+)?)\s*(?:[eE]\s*([+-]?\d+)|[xX\u00d7*\u00b7]\s*10\s*(?:\^|\*\*)\s*([+-]?\d+))"
    rf"(?![0-9A-Za-z_])"
)

_UNITS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    w: 10 * i for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2)
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_WORD = "|".join(sorted([*_UNITS, *_TENS, "hundred", *_SCALES], key=len, reverse=True))
# a run of number words joined by spaces, hyphens or `and`; or a number times a scale word
_SPELLED = re.compile(rf"\b(?:{_WORD})(?:(?:[\s\-\u2010\u2011]+|\s+and\s+)(?:{_WORD}))*\b", re.I)
_SCALED = re.compile(rf"{_EDGE_BEFORE}(\d+(?:\.\d+)?)\s+({'|'.join(_SCALES)})\b", re.I)


def _whole(value: Decimal) -> str | None:
    return str(int(value)) if value == value.to_integral_value() and value >= 0 else None


def _words_value(words: list[str]) -> int | None:
    """The number a run of number words names; digit by digit where every word is a single digit."""
    if len(words) >= 2 and all(w in _UNITS and _UNITS[w] < 10 for w in words):
        return int("".join(str(_UNITS[w]) for w in words))
    total = current = 0
    for word in words:
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * _SCALES[word]
            current = 0
    value = total + current
    return value if len(words) > 1 or value >= 10 else None


def spell_out(text: str) -> str:
    """`text` with scientific notation, scaled numbers and number words replaced by their digits."""

    def scientific(m: re.Match[str]) -> str:
        try:
            value = Decimal(m.group(1)) * Decimal(10) ** int(m.group(2) or m.group(3))
        except (InvalidOperation, ValueError):
            return m.group(0)
        whole = _whole(value)
        return _SPELLED_MARK + whole if whole else m.group(0)

    def scaled(m: re.Match[str]) -> str:
        whole = _whole(Decimal(m.group(1)) * _SCALES[m.group(2).lower()])
        return _SPELLED_MARK + whole if whole else m.group(0)

    def spelled(m: re.Match[str]) -> str:
        words = [w for w in re.split(r"[\s\-\u2010\u2011]+", m.group(0).lower()) if w != "and"]
        value = _words_value(words)
        return m.group(0) if value is None else _SPELLED_MARK + str(value)

    text = _SCIENTIFIC.sub(scientific, text)
    text = _SCALED.sub(scaled, text)
    return _SPELLED.sub(spelled, text)


def canonical_numbers(text: str) -> list[tuple[str, str, bool]]:
    """Every number `text` names, in order: its canonical digits (leading zeros kept; a long number's decimals
    after a `.`), as written, and whether written plainly (`_PLAIN`; a grouping, words, an exponent or an
    ordinal suffix is a disguise: it names the number as a rival, never as the expected value)."""
    text = spell_out(text)
    out = []
    for m in _NUMBER.finditer(text):
        written = m.group(0)
        digits = written.rstrip("stndrdh")  # noqa: B005 - the letters of the ordinal suffixes st, nd, rd, th
        canonical = digits if re.fullmatch(r"\d{5,}\.\d+", digits) else re.sub(r"\D", "", digits)
        plain = (
            written == digits and bool(_PLAIN.fullmatch(digits)) and text[m.start() - 1 : m.start()] != _SPELLED_MARK
        )
        out.append((canonical, written, plain))
    return out
