"""Reading an answer slot: the candidates of the asked kind, in one canonical form, and the slot's polarity.

One path for every kind (`read`): the slot (`region.py`: chat, the whole reply; completions, the documented
unit) is read in its comparison characters (HTML entities unescaped, `fold.py`), what it does not assert is
blanked (`polarity.py`), and what is left yields the candidates of the kind the expected values have
(`CandidateKind`, decided from them): numbers (`numbers.py`), UUIDs and hex strings, `return` lines
(`shapes.py`), `VAR` names, words of a closed list (niah's value words, given names, the latent family's
characters) anywhere, words of an open vocabulary (RULER's `cwe`, coded `fwe` words) as list items
(`words.py`); free text (a contract clause) has its numbers as candidates. The question's and the answer
prefix's own candidates are not offered ones. A scorer then compares the candidates with the expected values
in the same form: correct only when they are exactly the expected ones and the slot asserts them."""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ctxprobe.tasks.answers.fold import fold
from ctxprobe.tasks.answers.number_forms import canonical_numbers
from ctxprobe.tasks.answers.polarity import Polarity, asserted
from ctxprobe.tasks.answers.shapes import canonical_hex, canonical_statements, statement
from ctxprobe.tasks.answers.words import canonical_words, list_items

__all__ = ["CandidateKind", "Reading", "candidate_kind", "comparable", "read"]

Shape = Literal["number", "uuid", "hex", "code", "var", "closed", "open", "coded", "key", "text"]
_UUID = re.compile(r"^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$")
_HEX = re.compile(r"^[0-9a-f]+$")


def comparable(text: str) -> str:
    """`text` as candidates are read from it: HTML entities unescaped (twice: `&amp;#55;`), comparison characters."""
    return fold(html.unescape(html.unescape(text)))


Found = tuple[str, str, bool]  # a candidate: canonical, as written, written plainly


@dataclass(frozen=True)
class CandidateKind:
    """What counts as a candidate answer of one kind, and its canonical form."""

    shape: Shape
    width: int = 0
    vocabulary: frozenset[str] = frozenset()

    def canonical(self, value: str) -> str:
        """An expected value in the form its candidates take."""
        found = self.found(comparable(value), strict=False)
        return found[0][0] if len(found) == 1 else value.strip().casefold()

    def candidates(self, text: str) -> list[str]:
        """The candidates `text` names (already comparable), canonical, in order, repeats dropped."""
        return list(dict.fromkeys(c for c, _, _ in self.found(text, strict=True)))

    def found(self, text: str, strict: bool = True) -> list[Found]:
        """Every candidate `text` names (`strict`: only those of the kind's width), in order, with how it is
        written."""

        def words(items: Iterable[tuple[str, bool]], keep: Callable[[str], bool], fold_case: bool) -> list[Found]:
            return [(w.casefold() if fold_case else w, w, plain) for w, plain in items if keep(w)]

        readers: dict[Shape, Callable[[], list[Found]]] = {
            "number": lambda: [f for f in canonical_numbers(text) if not strict or len(f[0]) >= self.width - 1],
            "uuid": lambda: [f for f in canonical_hex(text) if not strict or len(f[0]) >= 16],
            "hex": lambda: [
                f
                for f in canonical_hex(text)
                if not strict or (len(f[0]) >= self.width // 2 and any(c.isdigit() for c in f[0]))
            ],
            "code": lambda: canonical_statements(text),
            "var": lambda: words(
                canonical_words(text), lambda w: len(w) == self.width and w.isascii() and w.isupper(), False
            ),
            "closed": lambda: words(canonical_words(text), lambda w: w.casefold() in self.vocabulary, True),
            "open": lambda: words(
                ((w, True) for w, _ in list_items(text)), lambda w: w.casefold() in self.vocabulary, True
            ),
            "coded": lambda: words(
                ((w, True) for w, _ in list_items(text)),
                lambda w: len(w) == self.width and w.isascii() and w.islower(),
                False,
            ),
            "key": lambda: [(k, k, True) for k in _keys(text)],
            "text": lambda: canonical_numbers(text),
        }
        return readers[self.shape]()


def _keys(text: str) -> Iterable[str]:
    """The `adjective-noun` keys `text` names (`tasks/families/vocab.py: make_key`), however joined or spaced."""
    from ctxprobe.tasks.families.vocab import ADJECTIVES, NOUNS

    words = [w.casefold() for w, _ in canonical_words(text)]
    return (f"{a}-{n}" for a, n in itertools.pairwise(words) if a in ADJECTIVES and n in NOUNS)


@cache
def _vocabularies() -> tuple[tuple[frozenset[str], bool], ...]:
    """The word lists values are drawn from, each with whether it is closed (no ordinary English in it)."""
    from ctxprobe.tasks.families.aggregate import cwe_words
    from ctxprobe.tasks.families.latent_table import character_names
    from ctxprobe.tasks.families.vocab import GIVEN_NAMES, VALUE_WORDS

    def lower(words: Iterable[str]) -> frozenset[str]:
        return frozenset(w.casefold() for w in words)

    return (
        (lower(VALUE_WORDS), True),
        (lower(GIVEN_NAMES), True),
        (lower(character_names()), True),
        (lower(cwe_words()), False),
    )


def candidate_kind(values: list[str]) -> CandidateKind:
    """The kind every expected value shares (free text where they share none)."""
    vals = [fold(v).strip() for v in values if v.strip()]
    if not vals:
        return CandidateKind("text")
    width = len(vals[0])
    folded = [v.casefold() for v in vals]
    same_width = all(len(v) == width for v in vals)
    if all(v.isdigit() for v in vals):
        return CandidateKind("number", width)
    if all(_UUID.match(v) for v in folded):
        return CandidateKind("uuid", 32)
    if all(_HEX.match(v) and len(v) >= 16 for v in folded):
        return CandidateKind("hex", width)
    if all(statement(v) is not None for v in vals):
        return CandidateKind("code", width)
    if same_width and width >= 3 and all(v.isascii() and v.isalpha() and v.isupper() for v in vals):
        return CandidateKind("var", width)
    for vocabulary, closed in _vocabularies():
        if all(v in vocabulary for v in folded):
            return CandidateKind("closed" if closed else "open", width, vocabulary)
    if same_width and width >= 5 and all(v.isascii() and v.isalpha() and v.islower() for v in vals):
        return CandidateKind("coded", width)
    if all(list(_keys(v)) == [v.casefold()] for v in vals):
        return CandidateKind("key", width)
    return CandidateKind("text", width)


@dataclass(frozen=True)
class Reading:
    """One answer slot, read: the slot as written and the unit it is, the candidates it asserts (canonical, in
    order; `written`: each as first written), those written plainly, the candidates it names without asserting
    them, and its polarity."""

    slot: str
    unit: str
    candidates: tuple[str, ...]
    written: tuple[str, ...]
    plain: frozenset[str]
    withheld: tuple[str, ...]
    polarity: Polarity
    asserted_text: str  # the unit, comparable, with what the slot does not assert blanked

    def offers(self, expected: Iterable[str]) -> tuple[list[str], list[str]]:
        """(the expected values it asserts, the other candidates it asserts), both canonical. An expected value
        counts only where written plainly at least once: written only in a disguise (`765 4321`, `0x…`, spelled
        out, letter by letter) it is a rival of itself, never the value named."""
        wanted = list(expected)
        found = [e for e in wanted if e in self.plain]
        return found, [c for c in self.candidates if c not in found]

    def shown(self, expected: Iterable[str] = (), as_expected: Iterable[str] = ()) -> list[str]:
        """The candidates as a record shows them: an expected one as the sample writes it, others as written."""
        names = dict(zip(expected, as_expected))
        return [names.get(c, w) if c in self.plain else w for c, w in zip(self.candidates, self.written)]


def read(
    slot: str,
    unit: str,
    kind: CandidateKind,
    frame: str,
    expected: Iterable[str] = (),
    scope: Callable[[str], str] | None = None,
) -> Reading:
    """Read `slot` (the answer slot, as written) for candidates of `kind`; `frame` is the question and the
    answer prefix, whose own candidates (other than the `expected` ones, canonical) are not offered. `scope`
    narrows what the slot asserts to the unit the rule reads (completions: the first informative sentence):
    polarity is read over the whole slot first, so a later correction or denial still takes the unit back."""
    text = comparable(slot)
    said = asserted(text)
    unit_text = scope(said.text) if scope else said.text
    framed = set(kind.candidates(comparable(frame))) - set(expected)
    found = [f for f in kind.found(unit_text) if f[0] not in framed]
    offered = dict.fromkeys(c for c, _, _ in found)
    written = {c: w for c, w, _ in reversed(found)}
    plain = frozenset(c for c, _, is_plain in found if is_plain)
    named = [c for c in kind.candidates(text) if c not in framed and c not in offered]
    return Reading(
        slot,
        unit,
        tuple(offered),
        tuple(written[c] for c in offered),
        plain,
        tuple(named),
        said.polarity(bool(offered)),
        unit_text,
    )
