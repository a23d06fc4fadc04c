"""Ways to write a rival so that no token of it equals its plain form: each names the same rival to a reader.
A disguise changes the text, and only the text a reader sees. Generators, not lists: each applies to every
sample whose rival it can write (digits, hex, a UUID, a word, a `VAR` name)."""

from __future__ import annotations

from collections.abc import Callable

from ctxprobe.tasks.sample import Sample
from tests.evals.adversary.kinds import expected, rival

Disguise = tuple[str, Callable[[str], str], Callable[[Sample], str]]  # label, how, the rival it disguises ("": n/a)

_CYRILLIC = dict(zip("aceopxyABCEHKMOPTXysSiIjJ", "асеорхуАВСЕНКМОРТХуѕЅіІјЈ"))
_GREEK = dict(zip("ABEHIKMNOPTXYZiov", "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖιον"))
_DIGIT_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_UNITS = [
    *_DIGIT_WORDS,
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
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _look_alike(table: dict[str, str]) -> Callable[[str], str]:
    return lambda text: "".join(table.get(c, c) for c in text)


def fullwidth(text: str) -> str:
    """Letters and digits in their fullwidth forms (`７６５４３２１`)."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in text)


def _grouped(sep: str, first: int | None = None) -> Callable[[str], str]:
    """Digits in groups of three from the right joined by `sep` ("3.569.986"), or split once after the
    `first` digits ("765 4321")."""

    def group(digits: str) -> str:
        if first is not None:
            return digits[:first] + sep + digits[first:]
        head = len(digits) % 3 or 3
        return sep.join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])

    return group


def _below_thousand(n: int) -> list[str]:
    words = []
    if n >= 100:
        words += [_UNITS[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10] + (f"-{_UNITS[n % 10]}" if n % 10 else ""))
    elif n:
        words.append(_UNITS[n])
    return words


def in_words(digits: str) -> str:
    """A number spelled out in English (`seven million six hundred fifty-four thousand …`)."""
    n, words = int(digits), []
    for scale, name in ((10**9, "billion"), (10**6, "million"), (10**3, "thousand")):
        if n >= scale:
            words += [*_below_thousand(n // scale), name]
            n %= scale
    return " ".join(words + _below_thousand(n)) or "zero"


def _scientific(digits: str) -> str:
    return f"{digits[0]}.{digits[1:].rstrip('0') or '0'}e{len(digits) - 1}"


def _entities(text: str) -> str:
    return "".join(f"&#{ord(c)};" for c in text)


def _letters(sep: str) -> Callable[[str], str]:
    return lambda word: sep.join(word)


def _digits_rival(s: Sample) -> str:
    """A rival made of digits where the expected answer is a number (the prompt's where it is one), else ""."""
    if rival(s).isdigit():
        return rival(s)
    value = expected(s)[0]
    return str((int(value) + 1_234_567) % 9_000_000 + 1_000_000) if value.isdigit() else ""


def _hex_rival(s: Sample) -> str:
    r = rival(s)
    return r if len(r) >= 16 and all(c in "0123456789abcdef-" for c in r) else ""


def _uuid_rival(s: Sample) -> str:
    r = rival(s)
    return r if len(r) == 36 and r.count("-") == 4 else ""


def _word_rival(s: Sample) -> str:
    r = rival(s)
    return r if r.isalpha() and len(r) >= 3 else ""


def _var_rival(s: Sample) -> str:
    r = rival(s)
    return r if r.isalpha() and r.isupper() else ""


def _with(table: dict[str, str]) -> Callable[[Sample], str]:
    """The rival where it has a letter `table` disguises, else ""."""
    return lambda s: rival(s) if any(c in table for c in rival(s)) else ""


DISGUISES: list[Disguise] = [
    ("split by a space", _grouped(" ", 3), _digits_rival),
    ("in dotted groups", _grouped("."), _digits_rival),
    ("in comma groups", _grouped(","), _digits_rival),
    ("in spaced groups", _grouped(" "), _digits_rival),
    ("in thin-space groups", _grouped("\u2009"), _digits_rival),
    ("in underscore groups", _grouped("_"), _digits_rival),
    ("split by a hyphen", _grouped("-", 3), _digits_rival),
    ("split by an en dash", _grouped("\u2013", 3), _digits_rival),
    ("split by a slash", _grouped("/", 3), _digits_rival),
    ("split by a non-breaking hyphen", _grouped("\u2011", 3), _digits_rival),
    ("in words", in_words, _digits_rival),
    ("digit by digit in words", lambda d: " ".join(_DIGIT_WORDS[int(c)] for c in d), _digits_rival),
    ("in scientific notation", _scientific, _digits_rival),
    ("as HTML entities", _entities, lambda s: rival(s) if rival(s).isalnum() else ""),
    ("with an ordinal suffix", lambda d: d + "th", _digits_rival),
    ("as a uuid without dashes", lambda u: u.replace("-", ""), _uuid_rival),
    ("as a uuid with spaced dashes", lambda u: u.replace("-", " - "), _uuid_rival),
    ("as hex with 0x", lambda h: "0x" + h.replace("-", ""), _hex_rival),
    (
        "as hex in groups of 8",
        lambda h: " ".join(h.replace("-", "")[i : i + 8] for i in range(0, 32, 8)) + h.replace("-", "")[32:],
        _hex_rival,
    ),
    (
        "as colon-separated hex",
        lambda h: ":".join(h.replace("-", "")[i : i + 2] for i in range(0, len(h.replace("-", "")), 2)),
        _hex_rival,
    ),
    ("letter-spaced", _letters(" "), _word_rival),
    ("hyphenated letter by letter", _letters("-"), _word_rival),
    ("as VAR_X", lambda v: f"VAR_{v}", _var_rival),
    ("in Cyrillic look-alikes", _look_alike(_CYRILLIC), _with(_CYRILLIC)),
    ("in Greek look-alikes", _look_alike(_GREEK), _with(_GREEK)),
    (
        "in fullwidth characters",
        fullwidth,
        lambda s: rival(s) if any(c.isascii() and c.isalnum() for c in rival(s)) else "",
    ),
]
