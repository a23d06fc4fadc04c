"""Answers written to game the scorer, for every answer kind in both modes, each with the verdict it must get.

Each case is built on a real sample (the family's generator at 700 tokens), so the rivals are the prompt's
own: the distractor needles, the other keys' values, the other chains' names. `rival(sample)` is another
candidate of the expected value's shape: a distractor needle's answer where the prompt has one, else one made
to the shape. Kept apart from the test so `benchmarks/bench_scorer_adversary.py` prints the same table.

The tricks are generated, not listed answer by answer: each is a way of writing an answer (`ANSWERS`, and the
disguises of a rival below) applied to every kind where it applies. Beside the first round's (candidates
listed, a value negated, the question repeated), the hardening round's: negation after the value ("X is
incorrect.", "X is wrong.", "X is not the answer."), a later correction ("X. Actually, scratch that: Y.", "X.
No wait, it is Y.": wrong when X is expected, right when Y is), a rival grouped so that no token equals it
("765 4321", "3.569.986", "3 569 986", thin spaces, underscores), a rival in Cyrillic or Greek look-alike
letters or in fullwidth characters, "A or B" and extra items for a needle file's `set` and `contains`, and
further numbers beside a needle file's `number`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Callable

from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.families.aggregate import cwe_words
from ctxprobe.tasks.families.latent_table import character_names
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


# a needle file's rivals: another answer of the item's kind (the needle files' items below)
NEEDLE_RIVALS = {"exact": ["blue", "red"], "number": ["1483", "2965"], "set": ["roses", "lilies"],
                 "contains": ["pine box", "oak crate"]}


def rival(s: Sample, nth: int = 0) -> str:
    """Another candidate of the expected answer's shape, from the prompt where it has one."""
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


def _all_values(s: Sample) -> str:
    return listed([n.answer for n in s.needles] + expected(s))


# Disguises of a rival: each writes the same rival so that no token of it equals the plain form.
_CYRILLIC = dict(zip("aceopxyABCEHKMOPTXysSiIjJ", "асеорхуАВСЕНКМОРТХуѕЅіІјЈ"))
_GREEK = dict(zip("ABEHIKMNOPTXYZiov", "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖιον"))


def _look_alike(table: dict[str, str]) -> Callable[[str], str]:
    def disguise(text: str) -> str:
        return "".join(table.get(c, c) for c in text)

    return disguise


def fullwidth(text: str) -> str:
    """Letters and digits in their fullwidth forms (`７６５４３２１`)."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in text)


def _grouped(sep: str, first: int | None = None) -> Callable[[str], str]:
    """Digits in groups of three from the right joined by `sep` ("3.569.986"), or split once after the
    `first` digits ("765 4321")."""
    def group(digits: str) -> str:
        if first is not None:
            return digits[:first] + sep + digits[first:]
        head = len(digits) % 3 or 3
        return sep.join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])

    return group


def _digits_rival(s: Sample) -> str:
    """A rival made of digits where the expected answer is a number (the prompt's where it is one), else ""."""
    if rival(s).isdigit():
        return rival(s)
    value = expected(s)[0]
    return str((int(value) + 1_234_567) % 9_000_000 + 1_000_000) if value.isdigit() else ""


def _with(table: dict[str, str]) -> Callable[[Sample], str]:
    """The rival where it has a letter `table` disguises, else ""."""
    return lambda s: rival(s) if any(c in table for c in rival(s)) else ""


# (label, disguise, the rival it disguises in a sample, "" where it does not apply): a disguise changes the text,
# and only the text a reader sees
DISGUISES: list[tuple[str, Callable[[str], str], Callable[[Sample], str]]] = [
    ("split by a space", _grouped(" ", 3), _digits_rival),
    ("in dotted groups", _grouped("."), _digits_rival),
    ("in comma groups", _grouped(","), _digits_rival),
    ("in spaced groups", _grouped(" "), _digits_rival),
    ("in thin-space groups", _grouped("\u2009"), _digits_rival),
    ("in underscore groups", _grouped("_"), _digits_rival),
    ("in Cyrillic look-alikes", _look_alike(_CYRILLIC), _with(_CYRILLIC)),
    ("in Greek look-alikes", _look_alike(_GREEK), _with(_GREEK)),
    ("in fullwidth characters", fullwidth, lambda s: rival(s) if any(c.isascii() and c.isalnum() for c in rival(s))
     else ""),
]


def _disguised(label: str, how: Callable[[str], str], pick: Callable[[Sample], str]) -> list[tuple[str, Answer, bool]]:
    """The disguised rival offered beside the value, and in a list of candidates."""
    def fits(s: Sample) -> bool:
        return bool(pick(s))

    return [
        (f"value or a rival {label}", _only(fits, lambda s: f" {bare(s)} or {how(pick(s))}"), False),
        (f"lists a rival {label}", _only(fits, lambda s: f" Candidates: {how(pick(s))}, {bare(s)}"), False),
    ]


def _only(fits: Callable[[Sample], bool], answer: Answer) -> Answer:
    """`answer` where `fits(sample)`, else no answer (the case is not tried)."""
    return lambda s: answer(s) if fits(s) else ""


def _next_number(s: Sample) -> str:
    """The value and the number after it ("4417, 4418."), where the value is a number."""
    value = s.expected.answers[0]
    return f" {value}, {int(value) + 1}." if len(s.expected.answers) == 1 and value.isdigit() else ""


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
    # negation after the value, and the bare "Not X."
    ("X is incorrect", lambda s: f" {bare(s)} is incorrect.", False),
    ("X is wrong", lambda s: f" {bare(s)} is wrong.", False),
    ("X is not the answer", lambda s: f" {bare(s)} is not the answer.", False),
    ("X isn't right", lambda s: f" {bare(s)} isn't right.", False),
    ("Not X", lambda s: f" Not {bare(s)}.", False),
    ("X is incorrect, names a rival", lambda s: f" {bare(s)} is incorrect; it is {rival(s)}.", False),
    # a later correction withdraws what came before it
    ("X, scratch that: rival", lambda s: f" {bare(s)}. Actually, scratch that: {rival(s)}.", False),
    ("X, no wait: rival", lambda s: f" {bare(s)}. No wait, it is {rival(s)}.", False),
    ("X, I mean rival", lambda s: f" {bare(s)}, I mean {rival(s)}.", False),
    ("X, correction: rival", lambda s: f" {bare(s)}. Correction: {rival(s)}.", False),
    ("rival, scratch that: X", lambda s: f" {rival(s)}. Actually, scratch that: {said(s)}", True),
    ("rival, no wait: X", lambda s: f" {rival(s)}. No wait, it is {said(s)}", True),
    ("rival, scratch that: X or rival", lambda s: f" {rival(s)}. Actually, scratch that: {bare(s)} or {rival(s, 1)}.",
     False),
    # more numbers beside a number
    ("the value and the next number", _next_number, False),
    # the value itself in fullwidth characters, as Chinese text may write it: still the value
    ("the value in fullwidth characters", lambda s: " " + fullwidth(said(s)), True),
    # a disguised rival: grouped digits, look-alike letters, fullwidth
    *[case for label, how, pick in DISGUISES for case in _disguised(label, how, pick)],
]
# a chain answer may walk its own hops: not a rival
CHAIN_ANSWERS: list[tuple[str, Answer, bool]] = [
    ("walks the chain", lambda s: " " + " then ".join(s.expected.chain) + ".", True),
]

# a needle file's items (`needles` family): one for each of its answer kinds
_NEEDLE_ITEMS: dict[str, dict[str, Any]] = {
    "exact": {"needles": ["The lighthouse was painted green."], "question": "What colour was the lighthouse painted?",
              "answers": ["green"]},
    "number": {"needles": ["The lighthouse has 1482 steps."], "question": "How many steps does the lighthouse have?",
               "answers": ["1482"]},
    "set": {"needles": ["The garden grows tulips, lavender and sunflowers."],
            "question": "Which flowers does the garden grow?", "answers": ["tulips", "lavender", "sunflowers"]},
    "contains": {"needles": ["She keeps the letters in a cedar chest."], "question": "Where does she keep the letters?",
                 "answers": ["cedar chest"]},
}


def _needle_item(kind: str) -> dict[str, Any]:
    return {**_NEEDLE_ITEMS[kind], "kind": kind, "answer_prefix": "Answer:", "max_tokens": 32}


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
    Kind("niah single, chat (value)", "niah", {"variant": "single"}, mode="chat"),
    Kind("recall hex, chat (string)", "recall", {"kind": "hex", "length": 40}, mode="chat"),
    Kind("multihop keychain, chat (chain)", "multihop", {"kind": "keychain", "hops": 3}, mode="chat"),
    Kind("latent (name)", "latent", {}),
    Kind("latent, chat (name)", "latent", {}, mode="chat"),
    *[Kind(f"needle file {k}{', chat' if mode == 'chat' else ''} ({k})", "needles", _needle_item(k), mode=mode)
      for mode in ("completions", "chat") for k in ("exact", "number", "set", "contains")],
]

# Honest answers a kind refuses by its own rule, not by a trick: a needle file's `exact` is the answer itself (no
# sentence around it: "No wait, it is green." is a sentence), and its `contains` has no rival shape, so a list of
# candidates there is an answer the rule cannot tell from prose (`contains` refuses only "A or B").
NOT_TRIED: dict[str, set[str]] = {
    "exact": {"echo of the target needle", "states it in a sentence", "repeats the question", "value in a code block",
              "normal sentence", "rival, no wait: X"},
    "contains": {"lists candidates", "everything in the prompt", "X, I mean rival"}
    | {f"lists a rival {label}" for label, _, _ in DISGUISES},
}


def cases() -> list[tuple[str, Sample, str, str, bool]]:
    """Every (kind label, sample, answer label, answer text, must be correct) the adversary tries. An
    answer that lists the prompt's values is tried where the prompt holds values other than the expected;
    a needle's echo where the needle is a sentence (a function's block is not)."""
    out = []
    for kind in KINDS:
        sample = kind.sample()
        chain = kind.family == "multihop" and kind.params["kind"] != "vartrack"
        has_rivals = kind.family != "needles" and any(  # a needle file's needles hold no other answer
            n.answer not in expected(sample) + sample.expected.answers for n in sample.needles)
        skipped = NOT_TRIED.get(sample.expected.kind, set())
        for label, answer, correct in ANSWERS + (CHAIN_ANSWERS if chain else []):
            if label == "everything in the prompt" and not has_rivals or label in skipped:
                continue
            if label == "echo of the target needle" and (not sample.needles or kind.params.get("kind") == "code"):
                continue
            if label == "rejects a rival" and kind.params.get("kind") == "clause":
                continue  # a contract clause has commas of its own: a negation reaches its first one only
            text = answer(sample)
            if text:  # "" where the trick does not apply to this kind
                out.append((kind.label, sample, label, text, correct))
    return out


def is_gamed(label: str) -> bool:
    """Whether the answer labelled `label` is written to game the scorer (it must score wrong)."""
    return not next(correct for name, _, correct in ANSWERS + CHAIN_ANSWERS if name == label)
