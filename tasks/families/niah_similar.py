"""niah's similar distractors (`distractors_kind: similar`, Context Rot's distractors): needles that differ
from the target in one component, so only reading the key and the value exactly tells them apart.

They cycle through three forms: a near key (a key sharing one word of the target's `adjective-noun`, with a
value of its own); a near key whose value is one character from the target's (a digit, a hex character, or
another word of the same first letter); and the target key's twin ("One of the special magic numbers for
the twin of amber-lobster is: ..."), the target's own key in a sentence about another entity."""

from __future__ import annotations

import random
import string

from ctxprobe.tasks.families.vocab import ADJECTIVES, NOUNS, VALUE_WORDS, make_value
from ctxprobe.tasks.registry import NeedleDraft


def near_key(target: str, rng: random.Random, taken: set[str]) -> str:
    """A fresh key sharing the adjective or the noun of `target` (an `adjective-noun` key), else any fresh key."""
    adjective, _, noun = target.partition("-")
    choices = [f"{adjective}-{n}" for n in NOUNS] + [f"{a}-{noun}" for a in ADJECTIVES]
    fresh = [k for k in choices if k not in taken]
    key = rng.choice(fresh) if fresh and noun else make_value("uuid", rng, taken)
    taken.add(key)
    return key


def near_value(value: str, kind: str, rng: random.Random, taken: set[str]) -> str:
    """A fresh value one character from `value` (a word: another of the same first letter, where there is one)."""
    for _ in range(64):
        if kind == "word":
            same = [w for w in VALUE_WORDS if w[0] == value[0] and w != value]
            candidate = rng.choice(same or [w for w in VALUE_WORDS if w != value])
        else:
            alphabet = string.digits if kind == "number" else "0123456789abcdef"
            spots = [i for i, c in enumerate(value) if c in alphabet and not (kind == "number" and i == 0)]
            at = rng.choice(spots)
            candidate = value[:at] + rng.choice([c for c in alphabet if c != value[at]]) + value[at + 1 :]
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    return make_value(kind, rng, taken)


def similar_distractors(
    target: str,
    value: str,
    kind: str,
    many: str,
    depths: list[float],
    rng: random.Random,
    keys: set[str],
    values: set[str],
) -> list[NeedleDraft]:
    """One distractor per depth, the three forms in turn."""
    out = []
    for i, depth in enumerate(depths):
        form = i % 3
        if form == 2:
            key, answer = f"the twin of {target}", make_value(kind, rng, values)
        else:
            key = near_key(target, rng, keys)
            answer = make_value(kind, rng, values) if form == 0 else near_value(value, kind, rng, values)
        out.append(
            NeedleDraft(
                role="distractor",
                text=f"One of the special magic {many} for {key} is: {answer}.",
                answer=answer,
                depth=depth,
            )
        )
    return out
