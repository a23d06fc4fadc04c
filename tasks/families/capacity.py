"""`capacity`: how many distinct key -> value facts a model holds at once, at each length.

`facts` facts go through the haystack; the question asks for `asked` of them (keys drawn uniformly over
the facts, so every position is equally likely to be asked), and the score is the fraction of asked values
recalled (partial credit) and whether all were (exact). A single needle tests whether one fact survives; sweeping `facts` (the suite's
`facts` axis, `--facts 1,4,16,64`) shows how many survive together, which is what separates a hybrid model's
fixed-size recurrent state from a growing attention cache.

- `spread: uniform`: the facts evenly through the whole context (the recipe's depth is not used);
  `clustered`: packed evenly into a region `cluster` percent of the haystack wide, centred on the depth
  (depths count haystack tokens, as every family's do).
- `interference: none`: `adjective-noun` keys; `similar`: keys in groups that share an `adjective-noun`
  stem and whose 3-letter codes differ from an earlier key of the group by one character (`amber-lobster-kqz`,
  `amber-lobster-kqx`): the hard case for associative recall.
- Values: 7-digit numbers or UUIDs, distinct, never in the haystack (the builder checks).

A separate family rather than a parameter of `niah`: niah's variants are RULER's shapes, pinned by their
golden prompts and RULER parity; this family's facts, placement and keys are its own."""

from __future__ import annotations

import random
import string
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.tasks.families.framing import frame, join_names
from ctxprobe.tasks.families.vocab import make_key, make_value
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode

MAX_FACTS = 2048  # adjective-noun keys: 2,500 pairs
GROUP = 16  # similar keys per shared stem
_NOUN = {"number": ("number", "numbers"), "uuid": ("UUID", "UUIDs")}
_TOKENS_PER_VALUE = {"number": 12, "uuid": 40}
# The most tokens one fact takes, with room to spare over what Gemma 3's tokenizer measures (a number fact
# at most 21, with a similar key 23, a UUID fact 47, with a similar key 50): what a length must hold per
# fact before a suite keeps a cell.
FACT_TOKENS = {("number", "none"): 28, ("number", "similar"): 32, ("uuid", "none"): 60, ("uuid", "similar"): 64}
FRAME_TOKENS = 160  # head, question and answer prefix with a few keys, and the least haystack around them


class CapacityParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    facts: int = Field(
        16,
        ge=1,
        le=MAX_FACTS,
        description="key -> value facts held in the context (the suite's `facts` axis sweeps it)",
    )
    asked: int = Field(
        1,
        ge=1,
        le=32,
        description="facts the question asks for (all of them where fewer are held); "
        "with more than one, partial credit is the fraction recalled",
    )
    spread: Literal["uniform", "clustered"] = Field(
        "uniform", description="uniform: evenly through the context; clustered: packed around the depth"
    )
    cluster: float = Field(10.0, gt=0, le=100, description="clustered: the region's width in percent of the context")
    interference: Literal["none", "similar"] = Field(
        "none", description="similar: keys sharing a stem and differing by one character"
    )
    value_kind: Literal["number", "uuid"] = Field("number", description="7-digit number or UUID")


@task_family("capacity", version="1")
class Capacity:
    Params = CapacityParams

    @staticmethod
    def max_facts(params: BaseModel, length: int) -> int:
        """The most facts a prompt of `length` tokens holds with these parameters, by the conservative
        per-fact bound `FACT_TOKENS`: a suite keeps the (facts, length) cells within it."""
        p = CapacityParams.model_validate(params)
        question = (_TOKENS_PER_VALUE[p.value_kind] + 8) * min(p.asked, p.facts)  # the asked keys, named twice
        return max(0, (length - FRAME_TOKENS - question) // FACT_TOKENS[(p.value_kind, p.interference)])

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        p = CapacityParams.model_validate(params)
        one, many = _NOUN[p.value_kind]
        keys = similar_keys(p.facts, rng) if p.interference == "similar" else _plain_keys(p.facts, rng)
        values: set[str] = set()
        facts = [(key, make_value(p.value_kind, rng, values)) for key in keys]
        asked = rng.sample(range(p.facts), min(p.asked, p.facts))
        needles = tuple(
            NeedleDraft(
                role="target" if i in asked else "distractor",
                text=f"The special magic {one} for {key} is: {value}.",
                answer=value,
                depth=d,
            )
            for i, ((key, value), d) in enumerate(zip(facts, fact_depths(p, depth)))
        )
        asked_keys = [facts[i][0] for i in asked]
        answers = [facts[i][1] for i in asked]
        names = join_names(asked_keys)
        head = (
            f"Some special magic {many} are hidden within the following text, each for its own key. Make sure "
            f"to memorize them all. I will quiz you about some of them afterwards."
        )
        if len(asked) == 1:
            expected = Expected(kind="value", answers=answers)
            question = f"What is the special magic {one} for {names} mentioned in the provided text?"
            prefix = f"The special magic {one} for {names} mentioned in the provided text is"
        else:
            expected = Expected(kind="values", answers=answers)
            question = f"What are the special magic {many} for {names} mentioned in the provided text?"
            prefix = f"The special magic {many} for {names} mentioned in the provided text are"
        return frame(
            head,
            question,
            prefix,
            mode,
            needles,
            expected,
            max_tokens=8 + _TOKENS_PER_VALUE[p.value_kind] * len(answers),
            unique=tuple(keys),
        )


def fact_depths(p: CapacityParams, depth: float) -> list[float]:
    """Each fact's depth in percent, in the facts' (shuffled) order: evenly through the context, or evenly
    through a region `cluster` wide centred on `depth` (moved inside 0-100 where it would stick out)."""
    low, width = (
        (0.0, 100.0) if p.spread == "uniform" else (min(max(depth - p.cluster / 2, 0.0), 100.0 - p.cluster), p.cluster)
    )
    return [round(low + width * (i + 0.5) / p.facts, 3) for i in range(p.facts)]


def _plain_keys(count: int, rng: random.Random) -> list[str]:
    taken: set[str] = set()
    return [make_key(rng, taken) for _ in range(count)]


def similar_keys(count: int, rng: random.Random) -> list[str]:
    """`count` distinct keys in groups of up to `GROUP` sharing an `adjective-noun` stem: a group's first key
    has a random 3-letter code, each later one the code of an earlier key of the group with one letter
    changed, so every key is one edit from another (no group is left with one key, unless `count` is 1).
    The keys come out shuffled."""
    stems: set[str] = set()
    keys: list[str] = []
    while len(keys) < count:
        left = count - len(keys)
        size = GROUP - 1 if left == GROUP + 1 else min(GROUP, left)
        stem = make_key(rng, stems)
        codes = ["".join(rng.choice(string.ascii_lowercase) for _ in range(3))]
        while len(codes) < size:
            parent = list(rng.choice(codes))
            at = rng.randrange(3)
            parent[at] = rng.choice([c for c in string.ascii_lowercase if c != parent[at]])
            code = "".join(parent)
            if code not in codes:
                codes.append(code)
        keys += [f"{stem}-{code}" for code in codes]
    rng.shuffle(keys)
    return keys
