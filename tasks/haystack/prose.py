"""The `prose` haystack: essay-like English paragraphs from a small grammar.

Each paragraph picks a topic (a harbour, a workshop, a garden...) and fills 3-8 sentence templates with
that topic's words, borrowing a few general ones. No digits can occur. Units are sentences: the first of
a paragraph starts with "\\n\\n", the others with " ".
"""

from __future__ import annotations

import random
import re
from typing import TypeVar

from ctxprobe.tasks.haystack import prose_vocab as vocab
from ctxprobe.tasks.haystack.base import GeneratedHaystack, partition

TEMPLATES = (
    # narrative, past tense
    "{Tc}, {W} {VD} the {NS} and {VD} the {N} {R}.",
    "{Wc} {R} {VD} the {J} {NS} that had been left {PR} {L}.",
    "Nobody could remember who had first {VD} the {NS} {PR} {L}.",
    "{Tc}, the {NS} {PR} {L} {S} {R}.",
    "By the time {W} arrived, the {NS} had already been {VN} and {L} was {J}.",
    "{Wc} stopped {PR} {L} to look at {AJ} {N}, then went on {R}.",
    "{Rc}, {W} {VD} the last of the {NS} and turned back toward {L}.",
    "As the day went on, {L} grew {J} and the {NS} were {VN} one by one.",
    "Nothing about the {NS} was unusual, yet {W} {VD} them twice.",
    "It was {J} work, but {W} never complained about the {NS}.",
    "There was always {AJ} {N} waiting {PR} {L}.",
    "The {NS} were {VN} long before anyone else had come to {P}.",
    # statements, present tense
    "{Wc} {V} the {NS} {T}.",
    "The {NS} {PR} {L} are {JJ}.",
    "Most {NS} here are {JT}, though a few are {JG}.",
    "There is {AJ} {N} {PR} {L} that {W} {V} {R}.",
    "{Tc}, {L} is {J} and the {NS} are {J}.",
    "Every {N} in {P} has its place, and {W} {V} each one {R}.",
    "{Wc} and a neighbour {VB} the {NS} together {T}.",
    "Each {N} is {VN} {R}, and the {J} ones are set aside {PR} {L}.",
    "Few visitors realise that {W} {V} every {N} by hand.",
    "People who come to {P} often ask why the {NS} are so {J}.",
    # observations
    "It is easy to notice how {J} the {NS} look {T}.",
    "One notices the {NS} first, and only later the {J} {N} {PR} {L}.",
    "Seen from {L}, the {NS} seem {JT} and oddly {JG}.",
    "{Rc}, the {JT} {NS} begin to look {JG}.",
    "The sound of {VG} the {NS} carries across {L} {T}.",
    "Anyone standing {PR} {L} would see {AJ} {N} and a row of {J} {NS}.",
    # explanations with subordinate clauses
    "Because the {N} is {J}, {W} {V} it {R} before {VG} the {NS}.",
    "When the {NS} are {J}, {W} usually {V} them {PR} {L}.",
    "Although {W} {V} the {NS} {R}, the {N} still needs {X}.",
    "If the {N} is left {J} for too long, the {NS} {PR} {L} become {J}.",
    "This is why {W} {V} the {NS} {T}, since {X} matters more than speed.",
    "Since {X} is part of every task here, the {NS} are always {VN} {R}.",
    "The reason is simple, for {AJ} {N} tends to last longer than {AN}.",
    "What makes {P} {J} is not the {NS} but the {X} of the people who work there.",
    "In {P}, {X} is learned slowly, and {W} {V} the {NS} with that in mind.",
    "Over time the {NS} have become {J}, which explains why {W} {V} them so {R}.",
    "{Xc} counts for more than strength when the {NS} have to be {VN}.",
    "Unless the {NS} are {VN} {T}, {W} has to {VB} them again.",
    "{Wc} once said that {AJ} {N} is worth more than a cart of {J} {NS}.",
    "Much depends on {X}, because even {AJ} {N} can spoil the {NS} {PR} {L}.",
)

_SLOT = re.compile(r"\{(\w+)\}")
_AN_EXCEPTIONS = ("use", "uni", "one")
_DOUBLE_FINAL = re.compile(r"^[^aeiou]*[aeiou][^aeiouwxy]$")


def _article(phrase: str) -> str:
    vowel = phrase[0] in "aeiou" and not phrase.startswith(_AN_EXCEPTIONS)
    return ("an " if vowel else "a ") + phrase


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _verb_forms(entry: str) -> tuple[str, str, str, str, str]:
    """base, third person singular, past, participle, gerund."""
    base, *irregular = entry.split("/")
    third = _plural(base)
    stem = base + base[-1] if _DOUBLE_FINAL.match(base) else base
    if base.endswith("ie"):
        gerund = base[:-2] + "ying"
    elif base.endswith("e") and not base.endswith("ee"):
        gerund = base[:-1] + "ing"
    else:
        gerund = stem + "ing"
    if irregular:
        return base, third, irregular[0], irregular[1], gerund
    if base.endswith("e"):
        past = base + "d"
    elif base.endswith("y") and base[-2] not in "aeiou":
        past = base[:-1] + "ied"
    else:
        past = stem + "ed"
    return base, third, past, past, gerund


def _capital(phrase: str) -> str:
    return phrase[0].upper() + phrase[1:]


def _topic_pools(topic: vocab.Topic) -> dict[str, tuple[str, ...]]:
    nouns = [entry.split("/") for entry in topic.things * 3 + vocab.GENERAL_THINGS]
    singular = tuple(parts[0] for parts in nouns)
    adjectives = topic.adjectives * 2 + vocab.GENERAL_ADJECTIVES
    verbs = [_verb_forms(v) for v in topic.verbs]
    pools = {
        "W": topic.people,
        "L": topic.places,
        "P": (topic.setting,),
        "N": singular,
        "NS": tuple(p[1] if len(p) > 1 else _plural(p[0]) for p in nouns),
        "AN": tuple(_article(n) for n in singular),
        "J": adjectives,
        "JT": topic.adjectives,
        "JG": vocab.GENERAL_ADJECTIVES,
        "AJ": tuple(_article(a) for a in adjectives),
        "JJ": tuple(f"{a} and {b}" for a in topic.adjectives for b in adjectives if a != b),
        "VB": tuple(v[0] for v in verbs),
        "V": tuple(v[1] for v in verbs),
        "VD": tuple(v[2] for v in verbs),
        "VN": tuple(v[3] for v in verbs),
        "VG": tuple(v[4] for v in verbs),
        "R": vocab.ADVERBS,
        "T": vocab.TIMES,
        "PR": vocab.PREPOSITIONS,
        "S": vocab.STATES,
        "X": vocab.ABSTRACTS,
    }
    for code in ("W", "L", "R", "T", "X"):
        pools[code + "c"] = tuple(_capital(p) for p in pools[code])
    return pools


T = TypeVar("T")
PaddedPool = tuple[tuple[str, ...], int]
CompiledTemplate = tuple[str, tuple[PaddedPool, ...]]


def padded(pool: tuple[T, ...]) -> tuple[tuple[T, ...], int]:
    """The pool stretched evenly to 2**bits >= 8 * len entries, so that `pool[getrandbits(bits)]` draws
    from it (each word within 12% of uniform) without the cost of a multiply and an int()."""
    bits = (8 * len(pool) - 1).bit_length()
    size = 1 << bits
    return tuple(pool[i * len(pool) // size] for i in range(size)), bits


def _compile(template: str, pools: dict[str, PaddedPool]) -> CompiledTemplate:
    """ "{W} {VD} the {N}." -> ("{}" format string, the pool for each slot in order)."""
    slots = _SLOT.findall(template)
    return _SLOT.sub("{}", template), tuple(pools[code] for code in slots)


CompiledTopic = tuple[tuple[CompiledTemplate, ...], int]


def compile_topic(pools: dict[str, tuple[str, ...]], templates: tuple[str, ...]) -> CompiledTopic:
    """A topic's templates compiled against its word pools, padded like a word pool."""
    padded_pools = {code: padded(pool) for code, pool in pools.items()}
    return padded(tuple(_compile(t, padded_pools) for t in templates))


COMPILED = tuple(compile_topic(_topic_pools(topic), TEMPLATES) for topic in vocab.TOPICS)
"""For each topic: its compiled templates, padded like a word pool."""


class ProseHaystack(GeneratedHaystack):
    kind = "prose"
    version = "3"
    block_units = 512
    compiled: tuple[CompiledTopic, ...] = COMPILED
    sentence_separator = " "  # before every sentence of a paragraph but its first

    def make_block(self, rng: random.Random, index: int) -> list[str]:
        draw = rng.getrandbits
        compiled = self.compiled
        n_topics = len(compiled)
        out: list[str] = []
        topic = draw(16) % n_topics
        for length in partition(rng, self.block_units, 3, 8):
            topic = (topic + 1 + draw(16) % (n_topics - 1)) % n_topics  # never the same topic twice
            templates, template_bits = compiled[topic]
            sep = "\n\n"
            used: set[str] = set()
            for _ in range(length):
                fmt, pools = templates[draw(template_bits)]
                while fmt in used:  # no template twice in one paragraph
                    fmt, pools = templates[draw(template_bits)]
                used.add(fmt)
                out.append(sep + fmt.format(*[p[draw(b)] for p, b in pools]))
                sep = self.sentence_separator
        return out
