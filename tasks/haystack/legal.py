"""The `legal` haystack: one long services contract of numbered articles and clauses.

Units: an article heading ("\\n\\nArticle 4. Payment Terms"), the first sentence of a clause with its number
("\\n\\n4.2 The Supplier shall ..."), and each further sentence of the clause (" The Customer may ...").
Numbers take only the forms "Article N" and "N.M"; every article is `article_units` units long, so
article numbers follow from the unit index alone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import cache

from ctxprobe.tasks.haystack import legal_vocab as vocab
from ctxprobe.tasks.haystack.base import (
    GeneratedHaystack,
    Haystack,
    haystack_kind,
    no_argument,
    partition,
)

TEMPLATES = (
    "{Pc} shall {V} {X} {W}.",
    "{Pc} shall {V} {X} in accordance with this Article, {C}.",
    "{Pc} shall not {V} {X} without the prior written consent of {O}.",
    "If {P} fails to {V} {X} {W}, {O} may {R}.",
    "{Cc}, {P} may {V} {X} on giving {O} not less than {NT} written notice.",
    "Neither Party shall be liable to the other for {L} arising from {E}.",
    "All rights in {X} shall remain with {P} until {D}.",
    (
        "{Pc} shall keep complete and accurate records relating to {X} and shall make them available to {O} "
        "on reasonable request."
    ),
    "The obligations of {P} under this clause shall survive {S}.",
    "{Pc} acknowledges that {X} must be handled {M}.",
    "{Pc} shall pay to {O} {A} if {E} occurs and is not remedied {W}.",
    "Where {E} prevents {P} from performing its obligations, {P} shall notify {O} {W}.",
    "Nothing in this Article shall limit the right of {P} to {V} {X}.",
    "For the purposes of this Article, {DEF}.",
    "{Pc} warrants that {X} will be {Q} {PER}.",
    "Any dispute concerning {X} shall first be referred to the contract managers of each Party.",
    "The total amount payable in respect of {X} shall not exceed {A} in any Contract Year.",
    "{Pc} may, acting reasonably, request that {O} {V} {X} {W}.",
    ("Notices concerning {X} shall be given in writing and delivered to the address of {O} set out in the Order Form."),
    "Payment in respect of {X} shall fall due {DUE}.",
    "Subject to {D}, {P} shall {V} {X} {M}.",
    "{Pc} shall ensure that {X} and {X2} are handled {M}.",
    "The parties agree that {X} shall be reviewed at least once in each Contract Year.",
    "In the event of {E}, {O} may {R}.",
    "Except in the case of {E}, the liability of {P} in respect of {X} shall not exceed {A}.",
)


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


_FIXED = {
    "W": vocab.DEADLINES,
    "C": vocab.CONDITIONS,
    "R": vocab.REMEDIES,
    "E": vocab.EVENTS,
    "L": vocab.LOSSES,
    "A": vocab.AMOUNTS,
    "D": vocab.DATES,
    "NT": vocab.NOTICE,
    "M": vocab.MANNERS,
    "Q": vocab.QUALITIES,
    "PER": vocab.PERIODS,
    "S": vocab.SURVIVAL,
    "DUE": vocab.DUE,
    "DEF": vocab.DEFINITIONS,
    "Cc": tuple(_cap(c) for c in vocab.CONDITIONS),
}
_COMPILED = tuple((t, tuple(re.findall(r"\{(\w+)\}", t))) for t in TEMPLATES)


class LegalHaystack(GeneratedHaystack):
    kind = "legal"
    version = "1"
    article_units = 32
    articles_per_block = 8
    block_units = article_units * articles_per_block
    max_article = 9999  # article numbers wrap before they reach five digits

    def make_block(self, rng: random.Random, index: int) -> list[str]:
        rand = rng.random
        out: list[str] = []
        for a in range(self.articles_per_block):
            number = (index * self.articles_per_block + a) % self.max_article + 1
            subject = vocab.SUBJECTS[int(rand() * len(vocab.SUBJECTS))]
            out.append(f"\n\nArticle {number}. {subject.title}")
            for clause, length in enumerate(partition(rng, self.article_units - 1, 1, 4), start=1):
                for s in range(length):
                    text = self.sentence(rand, subject)
                    out.append(f"\n\n{number}.{clause} {text}" if s == 0 else " " + text)
        return out

    @staticmethod
    def sentence(rand: Callable[[], float], subject: vocab.Subject) -> str:
        template, codes = _COMPILED[int(rand() * len(_COMPILED))]
        who = int(rand() * 2)
        party, other = vocab.PARTIES[who], vocab.PARTIES[1 - who]
        x = subject.objects[int(rand() * len(subject.objects))]
        fields = {
            "P": party,
            "Pc": _cap(party),
            "O": other,
            "X": x,
            "V": subject.verbs[int(rand() * len(subject.verbs))],
        }
        if "X2" in codes:
            others = [o for o in subject.objects if o != x]
            fields["X2"] = others[int(rand() * len(others))]
        for code in codes:
            pool = _FIXED.get(code)
            if pool is not None:
                fields[code] = pool[int(rand() * len(pool))]
        return template.format(**fields)

    def wrap_needle(self, sentence: str) -> str:
        return " " + sentence.strip()


@haystack_kind("legal")
@cache
def make_legal(arg: str | None) -> Haystack:
    no_argument("legal", arg)
    return LegalHaystack()
