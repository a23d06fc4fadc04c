"""The tokens an answer is compared in: whole words, numbers with thousands separators, uuids and joined
names, each Chinese or Japanese character on its own; and what counts as a candidate of a value's shape.
Used by the answer slot (`tasks/answers/region.py`: its sentences, what the question already said).
Every text is read in its comparison characters (`tasks/answers/fold.py`: NFKC, decimal digits, Cyrillic and
Greek look-alikes, invisible characters dropped), so `７６５４３２１` and `Меgan` are the tokens `7654321` and `Megan`."""

from __future__ import annotations

import re
from typing import Literal

from ctxprobe.tasks.answers.fold import fold

Shape = Literal["number", "uuid", "text"]

# A token: a digit group with thousands separators (1,234,567), a run of letters/digits joined by `-`, `_`
# or `.` with no space (uuids, `tidy-lobster`, `VAR_X`, `12.5`), or one Chinese or Japanese character:
# that script puts no space between words, so `答案是6030913。` holds the token `6030913`.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = rf"[^\W_{_CJK}]"
_TOKEN = re.compile(rf"\d{{1,3}}(?:,\d{{3}})+(?!\d)(?!,\d)|[{_CJK}]|{_WORD}+(?:[-_.]{_WORD}+)*")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_UUID = re.compile(r"^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
# Words that carry no answer: "Sure. The answer is: X" -> X.
FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "answer",
        "are",
        "as",
        "based",
        "certainly",
        "final",
        "given",
        "here",
        "i",
        "is",
        "it",
        "it's",
        "its",
        "my",
        "of",
        "ok",
        "okay",
        "on",
        "provided",
        "s",
        "sure",
        "text",
        "that",
        "the",
        "this",
        "to",
        "was",
        "yes",
    ]
)


def is_cjk(char: str) -> bool:
    """Whether `char` is a Chinese or Japanese character (no space separates it from a value)."""
    return bool(_CJK_CHAR.fullmatch(char))


def norm(token: str) -> str:
    """The comparison form of a token: its comparison characters, thousands separators dropped, case folded."""
    token = fold(token)
    return token.replace(",", "").casefold() if token[:1].isdigit() else token.casefold()


def tokens(text: str) -> list[str]:
    """The tokens of a text, as written (in its comparison characters)."""
    return _TOKEN.findall(fold(text))


def norm_tokens(text: str) -> list[str]:
    return [norm(t) for t in tokens(text)]


def find_tokens(needle: list[str], hay: list[str]) -> int:
    """Index where the token sequence `needle` occurs whole in `hay`, or -1."""
    width = len(needle)
    if width == 0:
        return -1
    for i in range(len(hay) - width + 1):
        if hay[i : i + width] == needle:
            return i
    return -1


def shape(value: str) -> Shape:
    """The kind of value a needle holds, which decides what counts as a candidate answer."""
    v = value.strip().casefold()
    if v.isdigit():
        return "number"
    if _UUID.match(v):
        return "uuid"
    return "text"


def is_candidate(token: str, kind: Shape, expected: str) -> bool:
    """A normalized token that looks like an answer of the expected shape. Numbers need at least half
    the expected digit count, so a list marker `1.` or a count `3` is not taken for the answer."""
    if kind == "number":
        return bool(_NUMBER.match(token)) and len(token.split(".")[0]) >= max(2, len(expected.strip()) // 2)
    if kind == "uuid":
        return bool(re.match(r"^[0-9a-f]+(?:-[0-9a-f]+){2,}$", token))
    return token not in FILLER
