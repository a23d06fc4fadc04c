"""Words and names in one canonical form, and the items of a list.

- letter spacing undone (`canonical_words`): three or more single letters joined by spaces, hyphens, dots or
  underscores read as the word they spell (`M e g a n`, `M-e-g-a-n`, `Q.W.E.R.T`); words are split at
  hyphens and underscores (`VAR_QWERT` holds `QWERT`); a word keeps its case (a `VAR` name is upper case) and
  is compared case-folded where the kind says so;
- the items of a list (`list_items`): where the words come from a vocabulary as large as English (RULER's
  `cwe` list: `appear`, `count` and `return` are in it), a word counts only where it stands as an item: alone
  between commas, semicolons, colons, `and`, `or`, line and sentence ends, or as the last word after `is`,
  `are`, `include` ("The words that appear most often are mocha, odd and cloudy" lists three); an item of
  words glued by `-` or `_` (`VAR_atm`) offers each of them."""

from __future__ import annotations

import re

__all__ = ["canonical_words", "list_items", "unspaced"]

_LETTER = "A-Za-z\u00c0-\u024f"
_SPACED = re.compile(
    rf"(?<![{_LETTER}])[{_LETTER}](?:[ .\-_\u2010\u2011\u2013\u00b7]{{1,3}}[{_LETTER}](?![{_LETTER}])){{2,}}"
)
_WORD = re.compile(rf"[{_LETTER}]+")
_ITEM_SPLIT = re.compile(r"[,;:\n\u3001\uff0c\uff1b\uff1a]|(?<=[.!?])\s|\b(?:and|or|then|&)\b", re.I)
_LEAD = frozenset(["is", "are", "was", "were", "include", "includes", "including", "be"])
_HEDGES = frozenset(
    ["a", "an", "the", "also", "maybe", "perhaps", "possibly", "probably", "too", "both", "word", "words"]
)


def unspaced(text: str) -> str:
    """`text` with letter spacing undone (`M e g a n` -> `Megan`)."""
    return _SPACED.sub(lambda m: "".join(c for c in m.group(0) if c.isalpha()), text)


_SPACED_OR_WORD = re.compile(f"(?P<spaced>{_SPACED.pattern})|(?P<word>{_WORD.pattern})")


def canonical_words(text: str) -> list[tuple[str, bool]]:
    """Every word of `text`, in order, letter spacing undone, split at hyphens and underscores, with whether it
    was written plainly (a whole word: not spelled out letter by letter, not glued to another by `-` or `_`)."""
    out = []
    for m in _SPACED_OR_WORD.finditer(text):
        if m.group("spaced"):
            out.append(("".join(c for c in m.group(0) if c.isalpha()), False))
        else:
            glued = text[m.start() - 1 : m.start()] in ("-", "_") or text[m.end() : m.end() + 1] in ("-", "_")
            out.append((m.group(0), not glued))
    return out


def list_items(text: str) -> list[tuple[str, int]]:
    """The words of `text` that stand as list items (see the module docstring), with where they start (letter
    spacing undone: an item spelled out is the word it spells)."""
    text = unspaced(text)
    out = []
    start = 0
    for piece in [*_ITEM_SPLIT.split(text)]:
        at = text.find(piece, start) if piece else start
        start = at + len(piece) if at >= 0 else start
        words = [(m.group(0), at + m.start()) for m in _WORD.finditer(piece)]
        words = [(w, i) for w, i in words if w.casefold() not in _HEDGES] or words[-1:]
        if len(words) == 1:
            out.append(words[0])
        elif len(piece.split()) == 1:  # one token of words glued by `-` or `_` (`VAR_atm`): each is an item
            out += words
        elif len(words) >= 2 and words[-2][0].casefold() in _LEAD:
            out.append(words[-1])
    return out
