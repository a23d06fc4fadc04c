"""The answer kinds the adversary corpus is tried on, each a real sample (the family's generator), so the rivals
are the prompt's own: the distractor needles, the other keys' values, the other chains' names. Every kind in both
modes: the general kinds (`value`, `values`, `string`, `chain`), the families' own (`name`, `nodes`, `mrcr`) and
a needle file's (`exact`, `number`, `set`, `contains`).

`rival(sample)` is another candidate of the expected value's kind: a distractor needle's answer where the prompt
has one, else one made to the kind. `said`, `bare` and `listed` write the expected answer as a model would."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.families.aggregate import cwe_words
from ctxprobe.tasks.families.latent_table import character_names
from ctxprobe.tasks.families.vocab import GIVEN_NAMES, VALUE_WORDS
from ctxprobe.tasks.sample import Recipe, Sample


@dataclass(frozen=True)
class Kind:
    """One answer kind as a family writes it."""

    label: str
    family: str
    params: dict[str, Any]
    mode: str = "completions"
    haystack: str = "prose"
    tokens: int = 700

    def sample(self) -> Sample:
        if self.label not in _BUILT:
            _BUILT[self.label] = build_sample(
                Recipe(
                    family=self.family,
                    params=self.params,
                    context_tokens=self.tokens,
                    depth=50,
                    seed=3,
                    mode=self.mode,
                    haystack=self.haystack,
                )
            )  # type: ignore[arg-type]
        return _BUILT[self.label]


_BUILT: dict[str, Sample] = {}  # each kind's sample, built once


def expected(s: Sample) -> list[str]:
    return s.expected.answers if s.expected.kind != "chain" else [s.expected.chain[-1]]


# a needle file's rivals: another answer of the item's kind (the needle files' items below)
NEEDLE_RIVALS = {
    "exact": ["blue", "red"],
    "number": ["1483", "2965"],
    "set": ["roses", "lilies"],
    "contains": ["pine box", "oak crate"],
}


def rival(s: Sample, nth: int = 0) -> str:
    """Another candidate of the expected answer's kind, from the prompt where it has one."""
    if s.recipe.family == "needles":
        return NEEDLE_RIVALS[s.expected.kind][nth]
    wanted = set(s.expected.answers) | set(s.expected.chain)
    if s.expected.kind == "name":
        return [n for n in character_names() if n not in wanted and n not in s.question][nth]
    others = [n.answer for n in s.needles if n.answer not in wanted]
    if len(others) > nth:
        return others[nth]
    value = expected(s)[0]
    if value.isdigit():
        return str((int(value) + 1_234_567 * (nth + 1)) % 9_000_000 + 1_000_000)
    if value.startswith("return "):
        return f"return round(total * rate + {nth + 7}, 2)"
    if len(value) == 36 and value.count("-") == 4:
        return str(uuid.UUID(int=0x1234567 + nth, version=4))
    if all(c in "0123456789abcdef" for c in value):
        return value[::-1] if nth == 0 else value[1:] + value[0]
    if value.isupper():
        return ["QWERT", "ZXCVB"][nth]
    if value in GIVEN_NAMES:
        return next(n for n in GIVEN_NAMES if n not in wanted and n not in s.question)
    if value in VALUE_WORDS:
        return [w for w in VALUE_WORDS if w not in wanted][nth]
    if value in cwe_words():
        return [w for w in cwe_words() if w not in wanted][nth]
    return "".join(chr(ord("a") + (ord(c) - ord("a") + 1 + nth) % 26) for c in value)  # a coded word


def listed(values: list[str]) -> str:
    return ", ".join(values)


def said(s: Sample) -> str:
    """The expected answer(s), ended as a sentence."""
    text = listed(s.expected.answers)
    return text if text.endswith(".") else text + "."


def bare(s: Sample) -> str:
    """The expected answer(s) without a closing period, to write something after them."""
    return listed(s.expected.answers).removesuffix(".")


# a needle file's items (`needles` family): one for each of its answer kinds
_NEEDLE_ITEMS: dict[str, dict[str, Any]] = {
    "exact": {
        "needles": ["The lighthouse was painted green."],
        "question": "What colour was the lighthouse painted?",
        "answers": ["green"],
    },
    "number": {
        "needles": ["The lighthouse has 1482 steps."],
        "question": "How many steps does the lighthouse have?",
        "answers": ["1482"],
    },
    "set": {
        "needles": ["The garden grows tulips, lavender and sunflowers."],
        "question": "Which flowers does the garden grow?",
        "answers": ["tulips", "lavender", "sunflowers"],
    },
    "contains": {
        "needles": ["She keeps the letters in a cedar chest."],
        "question": "Where does she keep the letters?",
        "answers": ["cedar chest"],
    },
}


def _needle_item(kind: str) -> dict[str, Any]:
    return {**_NEEDLE_ITEMS[kind], "kind": kind, "answer_prefix": "Answer:", "max_tokens": 32}


# the kinds the general tricks are tried on (an answer written as text around the value)
KINDS = [
    Kind("niah single (value, number)", "niah", {"variant": "single"}),
    Kind("niah multikey (value, number)", "niah", {"variant": "multikey", "distractors": 3}),
    Kind("niah single word (value, word)", "niah", {"variant": "single", "value_kind": "word"}),
    Kind("niah single uuid (value, uuid)", "niah", {"variant": "single", "value_kind": "uuid"}),
    Kind("niah multivalue (values)", "niah", {"variant": "multivalue", "values": 4}),
    Kind("niah multiquery (values)", "niah", {"variant": "multiquery", "queries": 4}),
    Kind(
        "niah single, ruler layout (value)", "niah", {"variant": "single", "template": "ruler"}, haystack="noise:ruler"
    ),
    Kind("niah multikey, chat (value)", "niah", {"variant": "multikey", "distractors": 3}, mode="chat"),
    Kind("niah single word, chat (value, word)", "niah", {"variant": "single", "value_kind": "word"}, mode="chat"),
    Kind("niah single uuid, chat (value, uuid)", "niah", {"variant": "single", "value_kind": "uuid"}, mode="chat"),
    Kind("recall hex (string)", "recall", {"kind": "hex", "length": 40}),
    Kind("recall uuid (string)", "recall", {"kind": "uuid", "distractors": 2}),
    Kind("recall code (string)", "recall", {"kind": "code"}),
    Kind("recall clause (string)", "recall", {"kind": "clause", "distractors": 2}),
    Kind("recall code, chat (string)", "recall", {"kind": "code"}, mode="chat"),
    Kind("recall clause, chat (string)", "recall", {"kind": "clause", "distractors": 2}, mode="chat"),
    Kind("multihop vartrack (values)", "multihop", {"kind": "vartrack", "hops": 3}),
    Kind("multihop vartrack, chat (values)", "multihop", {"kind": "vartrack", "hops": 3}, mode="chat"),
    Kind("multihop keychain (chain)", "multihop", {"kind": "keychain", "hops": 3}),
    Kind("multihop kinship (chain)", "multihop", {"kind": "kinship", "hops": 3}),
    Kind("multihop kinship, chat (chain)", "multihop", {"kind": "kinship", "hops": 3}, mode="chat"),
    Kind("capacity 16 facts, 1 asked (value)", "capacity", {"facts": 16, "asked": 1}),
    Kind("capacity 16 facts, 4 asked (values)", "capacity", {"facts": 16, "asked": 4}),
    Kind("capacity, chat (values)", "capacity", {"facts": 16, "asked": 4}, mode="chat"),
    Kind("aggregate common_words (values)", "aggregate", {"kind": "common_words"}),
    Kind("aggregate frequent_words (values)", "aggregate", {"kind": "frequent_words"}),
    Kind("aggregate common_words, chat (values)", "aggregate", {"kind": "common_words"}, mode="chat"),
    Kind("niah single, chat (value)", "niah", {"variant": "single"}, mode="chat"),
    Kind("recall hex, chat (string)", "recall", {"kind": "hex", "length": 40}, mode="chat"),
    Kind("multihop keychain, chat (chain)", "multihop", {"kind": "keychain", "hops": 3}, mode="chat"),
    Kind("latent (name)", "latent", {}),
    Kind("latent, chat (name)", "latent", {}, mode="chat"),
    *[
        Kind(f"needle file {k}{', chat' if mode == 'chat' else ''} ({k})", "needles", _needle_item(k), mode=mode)
        for mode in ("completions", "chat")
        for k in ("exact", "number", "set", "contains")
    ],
]

# the kinds scored by a dataset's published rule on a fixed format: tried with their own tricks only
FORMATTED = [
    Kind("graphwalk (nodes)", "graphwalk", {}, tokens=1500),
    Kind("graphwalk, chat (nodes)", "graphwalk", {}, mode="chat", tokens=1500),
    Kind("mrcr (mrcr)", "mrcr", {}, tokens=1500),
    Kind("mrcr, chat (mrcr)", "mrcr", {}, mode="chat", tokens=1500),
]
