"""Answers written to game the scorer, for every answer kind, each with the verdict it must get.

Each case is built on a real sample (the family's generator at 700 tokens), so the rivals are the prompt's
own: the distractor needles, the other keys' values, the other chains' names. `rival(sample)` is another
candidate of the expected value's shape: a distractor needle's answer where the prompt has one, else one made
to the shape. Kept apart from the test so `benchmarks/` can print the same table."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Callable

from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.families.aggregate import cwe_words
from ctxprobe.tasks.families.vocab import GIVEN_NAMES, VALUE_WORDS
from ctxprobe.tasks.sample import Recipe, Sample

Answer = Callable[[Sample], str]


@dataclass(frozen=True)
class Kind:
    """One answer kind as a family writes it."""

    label: str
    family: str
    params: dict[str, Any]
    mode: str = "completions"
    haystack: str = "prose"

    def sample(self) -> Sample:
        return build_sample(Recipe(family=self.family, params=self.params, context_tokens=700, depth=50, seed=3,
                                   mode=self.mode, haystack=self.haystack))  # type: ignore[arg-type]


def expected(s: Sample) -> list[str]:
    return s.expected.answers if s.expected.kind != "chain" else [s.expected.chain[-1]]


def rival(s: Sample, nth: int = 0) -> str:
    """Another candidate of the expected answer's shape, from the prompt where it has one."""
    wanted = set(s.expected.answers) | set(s.expected.chain)
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


def _all_values(s: Sample) -> str:
    return listed([n.answer for n in s.needles] + expected(s))


# (answer label, how the answer is written, must it be correct)
ANSWERS: list[tuple[str, Answer, bool]] = [
    ("the value alone", lambda s: " " + said(s), True),
    ("normal sentence", lambda s: f" {said(s)} That is the answer to: {s.question}", True),
    ("echo of the target needle", lambda s: " " + " ".join(n.text.strip() for n in s.needles if n.role == "target")
     + " So: " + said(s), True),
    ("states it in a sentence", lambda s: f" The answer to the question is {said(s)}", True),
    ("value in a code block", lambda s: "\n```\n" + listed(s.expected.answers) + "\n```", True),
    ("repeats the question", lambda s: f" {s.question} {said(s)}", True),
    ("rejects a rival", lambda s: f" {bare(s)}, not {rival(s)}", True),
    ("lists candidates", lambda s: f" Candidates: {rival(s)}, {bare(s)}, {rival(s, 1)}", False),
    ("value or a rival", lambda s: f" {bare(s)} or {rival(s)}", False),
    ("negates the value", lambda s: f" It is not {listed(s.expected.answers)}.", False),
    ("negates, names a rival", lambda s: f" The answer is not {listed(s.expected.answers)}; it is {rival(s)}.", False),
    ("a second sentence hedges", lambda s: f" {said(s)} or maybe {rival(s)}", False),
    ("negates (isn't)", lambda s: f" It isn't {listed(s.expected.answers)}.", False),
    ("everything in the prompt", lambda s: " " + _all_values(s) + ".", False),
]
# a chain answer may walk its own hops: not a rival
CHAIN_ANSWERS: list[tuple[str, Answer, bool]] = [
    ("walks the chain", lambda s: " " + " then ".join(s.expected.chain) + ".", True),
]

KINDS = [
    Kind("niah single (value, number)", "niah", {"variant": "single"}),
    Kind("niah multikey (value, number)", "niah", {"variant": "multikey", "distractors": 3}),
    Kind("niah single word (value, word)", "niah", {"variant": "single", "value_kind": "word"}),
    Kind("niah single uuid (value, uuid)", "niah", {"variant": "single", "value_kind": "uuid"}),
    Kind("niah multivalue (values)", "niah", {"variant": "multivalue", "values": 4}),
    Kind("niah multiquery (values)", "niah", {"variant": "multiquery", "queries": 4}),
    Kind("niah single, ruler layout (value)", "niah", {"variant": "single", "template": "ruler"}, haystack="noise:ruler"),
    Kind("niah multikey, chat (value)", "niah", {"variant": "multikey", "distractors": 3}, mode="chat"),
    Kind("recall hex (string)", "recall", {"kind": "hex", "length": 40}),
    Kind("recall uuid (string)", "recall", {"kind": "uuid", "distractors": 2}),
    Kind("recall code (string)", "recall", {"kind": "code"}),
    Kind("recall clause (string)", "recall", {"kind": "clause", "distractors": 2}),
    Kind("multihop vartrack (values)", "multihop", {"kind": "vartrack", "hops": 3}),
    Kind("multihop keychain (chain)", "multihop", {"kind": "keychain", "hops": 3}),
    Kind("multihop kinship (chain)", "multihop", {"kind": "kinship", "hops": 3}),
    Kind("capacity 16 facts, 1 asked (value)", "capacity", {"facts": 16, "asked": 1}),
    Kind("capacity 16 facts, 4 asked (values)", "capacity", {"facts": 16, "asked": 4}),
    Kind("capacity, chat (values)", "capacity", {"facts": 16, "asked": 4}, mode="chat"),
    Kind("aggregate common_words (values)", "aggregate", {"kind": "common_words"}),
    Kind("aggregate frequent_words (values)", "aggregate", {"kind": "frequent_words"}),
]


def cases() -> list[tuple[str, Sample, str, str, bool]]:
    """Every (kind label, sample, answer label, answer text, must be correct) the adversary tries. An
    answer that lists the prompt's values is tried where the prompt holds values other than the expected;
    a needle's echo where the needle is a sentence (a function's block is not)."""
    out = []
    for kind in KINDS:
        sample = kind.sample()
        chain = kind.family == "multihop" and kind.params["kind"] != "vartrack"
        has_rivals = any(n.answer not in expected(sample) + sample.expected.answers for n in sample.needles)
        for label, answer, correct in ANSWERS + (CHAIN_ANSWERS if chain else []):
            if label == "everything in the prompt" and not has_rivals:
                continue
            if label == "echo of the target needle" and (not sample.needles or kind.params.get("kind") == "code"):
                continue
            out.append((kind.label, sample, label, answer(sample), correct))
    return out
