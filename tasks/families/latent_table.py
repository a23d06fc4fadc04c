"""The latent family's shipped data and its lexical-overlap measure.

`data/latent_associations.txt` holds associations written for ctxprobe from general knowledge (a landmark
and its city and country, a work and its author and the author's country, a painting and its painter and
the painter's country, a dish and its country, an element and its symbol); `data/latent_names.txt` the
characters' names, none of them a word of an association.

The overlap of a question with a needle is NoLiMa's figure: ROUGE-1 precision over content words, the
share of the question's content words that the needle also holds. Words are compared case-folded, with a
possessive `'s` and a plural `s` dropped, and one word matches another that it begins when the shorter
has at least 4 letters (`thai` matches `thailand`), so a near-literal cue counts as literal."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

# Function words, and the words every question of the family asks with ("which", "has", "been"): these
# carry no cue, so they count neither for nor against a needle.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "actually",
        "after",
        "again",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
MIN_PREFIX = 4  # a word matches a longer one it begins from this many letters on


@dataclass(frozen=True)
class Association:
    """One row: the entity a needle names, its first hop and (where the row has one) its second."""

    kind: str
    entity: str
    first: str
    second: str

    def asked(self, hops: int) -> str:
        """The entity a question of `hops` hops names."""
        return self.first if hops == 1 else self.second


def _data_lines(name: str) -> list[str]:
    text = resources.files("ctxprobe.tasks.families").joinpath(f"data/{name}").read_text("utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@cache
def associations() -> tuple[Association, ...]:
    """Every shipped association, in file order."""
    rows = []
    for line in _data_lines("latent_associations.txt"):
        kind, entity, first, second = [*line.split("\t"), "", ""][:4]
        rows.append(Association(kind, entity, first, second))
    return tuple(rows)


@cache
def character_names() -> tuple[str, ...]:
    """The characters' names, in file order."""
    return tuple(_data_lines("latent_names.txt"))


def content_words(text: str) -> list[str]:
    """The words of `text` that carry content: case-folded, possessive and plural `s` dropped, stopwords out."""
    out = []
    for word in _WORD.findall(text.casefold()):
        word = re.sub(r"['\u2019]s$", "", word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word not in STOPWORDS:
            out.append(word)
    return out


def _match(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return short == long or (len(short) >= MIN_PREFIX and long.startswith(short))


def lexical_overlap(question: str, needle: str) -> float:
    """ROUGE-1 precision of the question against the needle over content words: the share of the question's
    content words that some word of the needle matches (0.0 for a question without content words)."""
    asked = content_words(question)
    held = content_words(needle)
    if not asked:
        return 0.0
    return sum(any(_match(word, other) for other in held) for word in asked) / len(asked)
