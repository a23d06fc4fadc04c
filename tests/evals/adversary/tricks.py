"""The ways of writing an answer, each with the verdict it must get, grouped by trick family:

- `honest`: the value alone, in a sentence, in a code block, after a repeated question or the needle's echo,
  rejecting a rival, corrected to the value, in fullwidth characters, under doubt ("I'm not sure, but"), after
  reasoning; and the honest answers a scorer once refused ("The return statement is `return round(…)`.", "The
  words that appear most often are …");
- `listing`: candidates listed, "X or Y", a hedge to a rival, everything the prompt holds, the next number;
- `polarity`: the value negated, refused ("I cannot say that it is X."), denied after it ("X is a lie.", "X
  (incorrect)", "Wrong: X", "X? Certainly not."), joked about ("X (just kidding)"), guessed, asked, or withdrawn
  for a rival ("X. Actually, scratch that: Y.");
- `layout`: a rival outside the first sentence where the slot is the whole reply (chat): a second paragraph ("X\n\n
  Or maybe Y."), a fenced rival after a blank line, a reasoning block after the answer;
- `disguise`: a rival beside the value written in a disguise (`disguises.py`);
- `kind`: a kind's own: a clause with an invented clause or amount beside it, code with "or yield …".

An answer is a function of the sample; "" where the trick does not apply to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctxprobe.tasks.sample import Sample
from tests.evals.adversary.disguises import DISGUISES, Disguise, fullwidth
from tests.evals.adversary.kinds import bare, expected, listed, rival, said

Answer = Callable[[Sample], str]


@dataclass(frozen=True)
class Trick:
    """One way of writing an answer: its label, its trick family, the answer, and whether it must be correct."""

    label: str
    family: str
    answer: Answer
    correct: bool

    @property
    def gamed(self) -> bool:
        return not self.correct


def _only(fits: Callable[[Sample], bool], answer: Answer) -> Answer:
    """`answer` where `fits(sample)`, else no answer (the case is not tried)."""
    return lambda s: answer(s) if fits(s) else ""


def _chat(answer: Answer) -> Answer:
    return _only(lambda s: s.recipe.mode == "chat", answer)


def _next_number(s: Sample) -> str:
    """The value and the number after it ("4417, 4418."), where the value is a number."""
    value = s.expected.answers[0]
    return f" {value}, {int(value) + 1}." if len(s.expected.answers) == 1 and value.isdigit() else ""


def _all_values(s: Sample) -> str:
    return listed([n.answer for n in s.needles] + expected(s))


def _recall(kind: str) -> Callable[[Sample], bool]:
    return lambda s: s.recipe.family == "recall" and s.recipe.params.get("kind") == kind


def _words_list(s: Sample) -> bool:
    return s.recipe.family == "aggregate" and s.recipe.params.get("kind") == "common_words"


HONEST = [
    Trick("the value alone", "honest", lambda s: " " + said(s), True),
    Trick("normal sentence", "honest", lambda s: f" {said(s)} That is the answer to: {s.question}", True),
    Trick(
        "echo of the target needle",
        "honest",
        lambda s: " " + " ".join(n.text.strip() for n in s.needles if n.role == "target") + " So: " + said(s),
        True,
    ),
    Trick("states it in a sentence", "honest", lambda s: f" The answer to the question is {said(s)}", True),
    Trick("value in a code block", "honest", lambda s: "\n```\n" + listed(s.expected.answers) + "\n```", True),
    Trick("repeats the question", "honest", lambda s: f" {s.question} {said(s)}", True),
    Trick("rejects a rival", "honest", lambda s: f" {bare(s)}, not {rival(s)}", True),
    Trick("rival, scratch that: X", "honest", lambda s: f" {rival(s)}. Actually, scratch that: {said(s)}", True),
    Trick("rival, no wait: X", "honest", lambda s: f" {rival(s)}. No wait, it is {said(s)}", True),
    Trick("the value in fullwidth characters", "honest", lambda s: " " + fullwidth(said(s)), True),
    Trick("doubt, then the value", "honest", lambda s: f" I'm not sure, but it is {said(s)}", True),
    Trick("I think it is X", "honest", lambda s: f" I think it is {said(s)}", True),
    Trick("reasoning, then the value", "honest", _chat(lambda s: f"<think>Let me look for it.</think>{said(s)}"), True),
    Trick(
        "a closing offer of help",
        "honest",
        _chat(lambda s: f"{said(s)}\n\nLet me know if you need anything else!"),
        True,
    ),
    Trick(
        "the return statement is `…`",
        "honest",
        _only(_recall("code"), lambda s: f" The return statement is `{s.expected.answers[0]}`."),
        True,
    ),
    Trick(
        "the words that appear most often are …",
        "honest",
        _only(_words_list, lambda s: f" The words that appear most often are {said(s)}"),
        True,
    ),
    Trick(
        "the most common words, by count, are: …",
        "honest",
        _only(_words_list, lambda s: f" The most common words, by count, are: {said(s)}"),
        True,
    ),
]

LISTING = [
    Trick("lists candidates", "listing", lambda s: f" Candidates: {rival(s)}, {bare(s)}, {rival(s, 1)}", False),
    Trick("value or a rival", "listing", lambda s: f" {bare(s)} or {rival(s)}", False),
    Trick("a second sentence hedges", "listing", lambda s: f" {said(s)} or maybe {rival(s)}", False),
    Trick("everything in the prompt", "listing", lambda s: " " + _all_values(s) + ".", False),
    Trick("the value and the next number", "listing", _next_number, False),
]

POLARITY = [
    Trick("negates the value", "polarity", lambda s: f" It is not {listed(s.expected.answers)}.", False),
    Trick(
        "negates, names a rival",
        "polarity",
        lambda s: f" The answer is not {listed(s.expected.answers)}; it is {rival(s)}.",
        False,
    ),
    Trick("negates (isn't)", "polarity", lambda s: f" It isn't {listed(s.expected.answers)}.", False),
    Trick("X is incorrect", "polarity", lambda s: f" {bare(s)} is incorrect.", False),
    Trick("X is wrong", "polarity", lambda s: f" {bare(s)} is wrong.", False),
    Trick("X is not the answer", "polarity", lambda s: f" {bare(s)} is not the answer.", False),
    Trick("X isn't right", "polarity", lambda s: f" {bare(s)} isn't right.", False),
    Trick("Not X", "polarity", lambda s: f" Not {bare(s)}.", False),
    Trick("X is incorrect, names a rival", "polarity", lambda s: f" {bare(s)} is incorrect; it is {rival(s)}.", False),
    Trick("I cannot say that it is X", "polarity", lambda s: f" I cannot say that it is {said(s)}", False),
    Trick("X (just kidding)", "polarity", lambda s: f" {bare(s)} (just kidding)", False),
    Trick("X. Just kidding.", "polarity", lambda s: f" {said(s)} Just kidding.", False),
    Trick("X (incorrect)", "polarity", lambda s: f" {bare(s)} (incorrect)", False),
    Trick("X is a lie", "polarity", lambda s: f" {bare(s)} is a lie.", False),
    Trick("Wrong: X", "polarity", lambda s: f" Wrong: {said(s)}", False),
    Trick("X? Certainly not.", "polarity", lambda s: f" {bare(s)}? Certainly not.", False),
    Trick("Is it X?", "polarity", lambda s: f" Is it {bare(s)}?", False),
    Trick("X, just a guess", "polarity", lambda s: f" {bare(s)}, just a guess.", False),
    Trick("X, scratch that: rival", "polarity", lambda s: f" {bare(s)}. Actually, scratch that: {rival(s)}.", False),
    Trick("X, no wait: rival", "polarity", lambda s: f" {bare(s)}. No wait, it is {rival(s)}.", False),
    Trick("X, I mean rival", "polarity", lambda s: f" {bare(s)}, I mean {rival(s)}.", False),
    Trick("X, correction: rival", "polarity", lambda s: f" {bare(s)}. Correction: {rival(s)}.", False),
    Trick(
        "rival, scratch that: X or rival",
        "polarity",
        lambda s: f" {rival(s)}. Actually, scratch that: {bare(s)} or {rival(s, 1)}.",
        False,
    ),
]

LAYOUT = [
    Trick(
        "X, then 'Or maybe Y.' in a second paragraph",
        "layout",
        _chat(lambda s: f"{said(s)}\n\nOr maybe {rival(s)}."),
        False,
    ),
    Trick(
        "X, then a fenced rival after a blank line",
        "layout",
        _chat(lambda s: f"{said(s)}\n\n```\n{rival(s)}\n```"),
        False,
    ),
    Trick(
        "X, then a reasoning block naming a rival",
        "layout",
        _chat(lambda s: f"{said(s)}\n<think>{rival(s)}</think>"),
        False,
    ),
    Trick(
        "X with a reasoning block naming a rival", "layout", lambda s: f" {bare(s)} <think>{rival(s)}</think>", False
    ),
]

KIND = [
    Trick(
        "the clause and an invented clause",
        "kind",
        _only(_recall("clause"), lambda s: f" {bare(s)}; {rival(s)}"),
        False,
    ),
    Trick(
        "the clause, then an invented clause in a second paragraph",
        "kind",
        _chat(_only(_recall("clause"), lambda s: f"{said(s)}\n\n{rival(s)}")),
        False,
    ),
    Trick(
        "the clause and an invented amount",
        "kind",
        _only(_recall("clause"), lambda s: f" {bare(s)} (or GBP 999,999.00)"),
        False,
    ),
    Trick("code or yield …", "kind", _only(_recall("code"), lambda s: f" `{bare(s)}` or yield round(total, 2)"), False),
    Trick(
        "code, or yield … in the same line",
        "kind",
        _only(_recall("code"), lambda s: f" {bare(s)} or yield {rival(s).removeprefix('return ')}"),
        False,
    ),
]


def _disguised(disguise: Disguise) -> list[Trick]:
    """The disguised rival offered beside the value, and in a list of candidates."""
    label, how, pick = disguise

    def fits(s: Sample) -> bool:
        return bool(pick(s))

    return [
        Trick(f"value or a rival {label}", "disguise", _only(fits, lambda s: f" {bare(s)} or {how(pick(s))}"), False),
        Trick(
            f"lists a rival {label}",
            "disguise",
            _only(fits, lambda s: f" Candidates: {how(pick(s))}, {bare(s)}"),
            False,
        ),
    ]


DISGUISED = [trick for disguise in DISGUISES for trick in _disguised(disguise)]

# a chain answer may walk its own hops: not a rival
CHAIN = [Trick("walks the chain", "honest", lambda s: " " + " then ".join(s.expected.chain) + ".", True)]

TRICKS = [*HONEST, *LISTING, *POLARITY, *LAYOUT, *KIND, *DISGUISED]
