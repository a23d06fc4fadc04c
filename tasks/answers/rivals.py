"""Rival candidates: what else an answer could offer in place of the expected value(s).

An answer is exact only when it names the expected value(s) and nothing else of their kind, so a model
that lists every number it half-remembers is not scored as if it recalled. A rival is, in the answer
region and outside the question's and the answer prefix's own words (so keys, the asked names and the
prefix never count):

- a token of the expected value's shape that is not expected: another number of at least one digit fewer
  than the expected (for a 7-digit value, 6 or more digits: `1.`, a count, a year, or `854` where the answer
  budget cut a repeated `8543079` are not); another UUID; another hex string of at least
  half the expected length; another upper-case name of the expected width (`VAR` names); another word
  of the vocabulary the expected values come from (niah's value words, kinship's given names, RULER's
  `cwe` word list); for lower-case coded words of one width (RULER's `fwe`), another such word;
- another needle's answer written in the prompt (a distractor's value, another key's value, a distractor
  chain's names, another function's return line or another clause);
- for a `return` line, another `return` statement with a call in it.

A rival is a rival however it is written: the text is read in its comparison characters (`tasks/answers/fold.py`:
fullwidth digits, Cyrillic and Greek look-alike letters), and for numbers, digits grouped by spaces, dots, commas,
thin or no-break spaces, underscores or apostrophes (`765 4321`, `3.569.986`, `3 569 986`, groups of 1 to 4
digits) read as the one number they make. The expected value itself must still be named as its kind requires
(`765 4321` does not name 7654321): a grouping only ever adds a rival, never credits.

Taken from what the sample already knows (its expected values and its needles), so old records re-score
the same way. For a chain (keychain, kinship) the asked chain's own hops are not rivals: an answer may walk
the chain before it names the end. QA's free-text answers have no shape: only negation applies there.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from ctxprobe.tasks.answers.fold import fold
from ctxprobe.tasks.answers.tokens import find_tokens, is_candidate, norm, norm_tokens, tokens
from ctxprobe.tasks.families.aggregate import cwe_words
from ctxprobe.tasks.families.vocab import GIVEN_NAMES, VALUE_WORDS
from ctxprobe.tasks.sample import Sample

RivalShape = Literal["number", "uuid", "hex", "var", "letters", "vocab", "code", "none"]

_UUID = re.compile(r"^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$")
_HEX = re.compile(r"^[0-9a-f]+$")
_RETURN = re.compile(r"\breturn\b[^(\n]*\(")
# digits in groups of 1 to 4 joined by one separator: `765 4321`, `3.569.986`, `3,569,986`, `3 569 986`, `7_654_321`
_GROUPED = re.compile(r"(?<![\w.,'\u2019])\d{1,4}(?:[ \u00a0\u2007\u2009\u202f._,'\u2019]\d{1,4})+(?!\w)")


@dataclass(frozen=True)
class Rivals:
    """The rival candidates of one sample: a shape (with the expected width) and the prompt's other answers."""

    shape: RivalShape = "none"
    width: int = 0
    vocabulary: frozenset[str] = frozenset()
    phrases: tuple[tuple[str, ...], ...] = ()
    allowed: frozenset[tuple[str, ...]] = field(default_factory=frozenset)

    def offered(self, text: str, excluded: Collection[str]) -> list[str]:
        """The distinct rivals named in `text` (negated clauses already masked), in order of appearance:
        numbers, uuids, hex strings and phrases in normalized form, words as written."""
        found: dict[str, int] = {}
        text = fold(text)
        raw = tokens(text)
        normed = [norm(t) for t in raw]
        for i, (written, tok) in enumerate(zip(raw, normed)):
            if tok not in excluded and (tok,) not in self.allowed and self._shaped(written, tok):
                found.setdefault(written if self.shape in ("var", "letters", "vocab") else tok, i)
        for phrase in self.phrases:
            at = find_tokens(list(phrase), normed)
            if at >= 0 and phrase not in self.allowed and not set(phrase) <= set(excluded):
                found.setdefault(" ".join(phrase), at)
        if self.shape == "number" or any(len(p) == 1 and p[0].isdigit() for p in self.phrases):
            for number, at in _grouped_numbers(text):
                if number in excluded or (number,) in self.allowed:
                    continue
                if (number,) in self.phrases or (self.shape == "number" and len(number) >= self.width - 1):
                    found.setdefault(number, at)
        if self.shape == "code":  # each `return f(...)` written, to the parenthesis that closes its call
            for match in _RETURN.finditer(text):
                statement = _closed(text, match.end())
                if statement and tuple(norm_tokens(match.group(0) + statement)) not in self.allowed:
                    found.setdefault(" ".join(norm_tokens(match.group(0) + statement)), len(normed))
        return sorted(found, key=lambda k: found[k])

    def _shaped(self, written: str, tok: str) -> bool:
        if self.shape == "number":  # a fragment cut by the answer budget (`854` of 8543079) or a count is not
            return is_candidate(tok, "number", "9" * self.width) and len(tok.split(".")[0]) >= self.width - 1
        if self.shape == "uuid":
            return bool(_UUID.match(tok))
        if self.shape == "hex":
            return bool(_HEX.match(tok)) and len(tok) >= self.width // 2
        if self.shape == "var":
            return len(written) == self.width and written.isascii() and written.isalpha() and written.isupper()
        if self.shape == "letters":
            return len(written) == self.width and written.isascii() and written.isalpha() and written.islower()
        if self.shape == "vocab":
            return tok in self.vocabulary
        return False


def _grouped_numbers(text: str) -> list[tuple[str, int]]:
    """Each number written in groups in `text` (`765 4321` -> `7654321`), with the index of its first token."""
    out = []
    for match in _GROUPED.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        out.append((digits, len(tokens(text[: match.start()]))))
    return out


def _closed(text: str, start: int) -> str:
    """The text from `start` (just after an opening parenthesis) through the one that closes it; "" when
    the line ends first."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "\n":
            return ""
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    return ""


def rivals_of(sample: Sample) -> Rivals:
    """The rivals of `sample`'s expected answer (see the module docstring)."""
    expected = sample.expected
    if expected.kind == "chain":
        shaped, allowed_values = [(expected.chain or expected.answers)[-1]], expected.chain or expected.answers
    elif expected.kind in ("value", "values", "string"):
        shaped = allowed_values = expected.answers
    else:  # QA's alternatives and a needle file's rules: no shape to compare
        return Rivals()
    allowed = frozenset(tuple(norm_tokens(v)) for v in allowed_values)
    others = {tuple(norm_tokens(n.answer)) for n in sample.needles} - allowed
    phrases = tuple(sorted(p for p in others if p))
    shape, width, vocabulary = _shape(shaped)
    return Rivals(shape=shape, width=width, vocabulary=vocabulary, phrases=phrases, allowed=allowed)


def _shape(values: list[str]) -> tuple[RivalShape, int, frozenset[str]]:
    """The shape every expected value shares, its width, and the vocabulary for words."""
    vals = [fold(v).strip() for v in values if v.strip()]
    if not vals:
        return "none", 0, frozenset()
    width = len(vals[0])
    if all(v.isdigit() for v in vals):
        return "number", width, frozenset()
    folded = [v.casefold() for v in vals]
    if all(_UUID.match(v) for v in folded):
        return "uuid", width, frozenset()
    if all(_HEX.match(v) and len(v) >= 16 for v in folded):
        return "hex", width, frozenset()
    if all(v.startswith("return ") for v in vals):
        return "code", width, frozenset()
    same_width = all(len(v) == width for v in vals)
    if same_width and width >= 3 and all(v.isascii() and v.isalpha() and v.isupper() for v in vals):
        return "var", width, frozenset()
    for vocabulary in _vocabularies():
        if all(v in vocabulary for v in folded):
            return "vocab", width, vocabulary
    if same_width and width >= 5 and all(v.isascii() and v.isalpha() and v.islower() for v in vals):
        return "letters", width, frozenset()
    return "none", width, frozenset()


@cache
def _vocabularies() -> tuple[frozenset[str], ...]:
    """The word lists values are drawn from: niah's value words, kinship's given names, RULER's cwe words."""
    return tuple(frozenset(w.casefold() for w in words) for words in (VALUE_WORDS, GIVEN_NAMES, cwe_words()))
