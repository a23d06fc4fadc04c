"""The `needle` haystack: RULER's `needle` haystack type (its `niah_multikey_2` and `niah_multikey_3`), where
the filler is itself needles. Every line is a distractor needle of the same form as the target's, with its
own key and value, so finding the target takes its key alone.

`needle` writes word keys and 7-digit numbers (`niah_multikey_2`); `needle:uuid` uuid keys and uuid values
(`niah_multikey_3`). Lines are joined by newlines, as RULER joins them, and an inserted needle is a line of
its own. The distractor keys are adjective-noun pairs from the prose vocabulary (about 20,000 of them), so a
task's key is rarely among them; the builder redraws a sample whose key or value the filler holds."""

from __future__ import annotations

import random
import uuid
from functools import cache

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack import prose_vocab
from ctxprobe.tasks.haystack.base import GeneratedHaystack, Haystack, haystack_kind

NEEDLE = "\nOne of the special magic {noun} for {key} is: {value}."
ADJECTIVES = tuple(sorted({a for t in prose_vocab.TOPICS for a in t.adjectives} | set(prose_vocab.GENERAL_ADJECTIVES)))
NOUNS = tuple(
    sorted(
        {
            entry.split("/")[0]
            for entry in (*prose_vocab.GENERAL_THINGS, *(x for t in prose_vocab.TOPICS for x in t.things))
        }
        - {n for n in (x.split("/")[0] for t in prose_vocab.TOPICS for x in t.things) if " " in n}
    )
)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class NeedleHaystack(GeneratedHaystack):
    """Unit i is one distractor needle on a line of its own: word keys, 7-digit numbers."""

    kind = "needle"
    version = "1"
    block_units = 256

    def line(self, rng: random.Random) -> str:
        key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"
        return NEEDLE.format(noun="numbers", key=key, value=rng.randint(1_000_000, 9_999_999))

    def make_block(self, rng: random.Random, index: int) -> list[str]:
        return [self.line(rng) for _ in range(self.block_units)]

    def wrap_needle(self, sentence: str) -> str:
        return "\n" + sentence.strip()


class UuidNeedleHaystack(NeedleHaystack):
    """Unit i is one distractor needle with a uuid key and a uuid value."""

    kind = "needle:uuid"

    def line(self, rng: random.Random) -> str:
        return NEEDLE.format(noun="uuids", key=_uuid(rng), value=_uuid(rng))


@haystack_kind("needle")
@cache
def make_needle(arg: str | None) -> Haystack:
    if arg == "uuid":
        return UuidNeedleHaystack()
    if arg is not None:
        raise UserError(f"haystack 'needle' takes no argument but 'uuid' (uuid keys and values), got needle:{arg}")
    return NeedleHaystack()
