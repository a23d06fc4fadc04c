"""The scorer against the adversary corpus (`tests/evals/adversary/`): for every answer kind in both modes, no gamed
answer is credited and no honest one rejected, trick by trick."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from tests.evals.adversary.corpus import cases
from tests.evals.adversary.disguises import fullwidth, in_words
from tests.evals.adversary.kinds import FORMATTED, KINDS, expected
from tests.tiered import tiered

CASES = cases()


# The fast tier keeps each answer kind with each family of tricks, and each trick, once (tests/tiered.py).
@pytest.mark.parametrize(
    "case",
    tiered(CASES, [f"{c.kind} | {c.trick.label}" for c in CASES], lambda c: [(c.kind, c.trick.family), c.trick.label]),
)
def test_adversary_verdict(case):
    score = score_sample(case.sample, case.text)
    assert score.correct is case.correct, (case.trick.label, case.text, score)
    if not case.correct:
        assert score.partial < 1.0, (case.trick.label, case.text, score)


def test_every_kind_meets_every_family_of_tricks_in_both_modes():
    kinds = {k.label for k in KINDS + FORMATTED}
    assert {c.kind for c in CASES} == kinds
    assert {k.mode for k in KINDS + FORMATTED} == {"completions", "chat"}
    answer_kinds = {(k.sample().expected.kind, k.mode) for k in KINDS + FORMATTED}
    for kind in ("value", "values", "string", "chain", "name", "nodes", "mrcr", "exact", "number", "set", "contains"):
        assert {(kind, "completions"), (kind, "chat")} <= answer_kinds, kind
    for family in ("honest", "polarity"):
        assert {c.kind for c in CASES if c.trick.family == family} == kinds, family
    mrcr = {k.label for k in FORMATTED if k.family == "mrcr"}  # one message asked: no list to pad
    assert {c.kind for c in CASES if c.trick.family == "listing"} == kinds - mrcr
    assert {c.kind for c in CASES if c.trick.family == "disguise"} == {k.label for k in KINDS}
    chat = {k.label for k in KINDS + FORMATTED if k.mode == "chat"}
    assert {c.kind for c in CASES if c.trick.family == "layout"} >= chat


def test_the_tricks_named_in_the_hardening_round_are_tried():
    tried = {c.trick.label for c in CASES}
    assert {
        "I cannot say that it is X",
        "X (just kidding)",
        "X (incorrect)",
        "X is a lie",
        "Wrong: X",
        "X? Certainly not.",
        "X, then 'Or maybe Y.' in a second paragraph",
        "X, then a fenced rival after a blank line",
        "the clause and an invented clause",
        "the clause and an invented amount",
        "code or yield …",
        "the list plus one node",
        "the message, then a reasoning block",
        "the return statement is `…`",
        "the words that appear most often are …",
    } <= tried
    for disguise in (
        "split by a hyphen",
        "split by an en dash",
        "split by a slash",
        "split by a non-breaking hyphen",
        "in words",
        "in scientific notation",
        "as HTML entities",
        "with an ordinal suffix",
        "as a uuid without dashes",
        "as a uuid with spaced dashes",
        "as hex with 0x",
        "as hex in groups of 8",
        "as colon-separated hex",
        "letter-spaced",
        "hyphenated letter by letter",
        "as VAR_X",
    ):
        assert f"value or a rival {disguise}" in tried, disguise


def test_every_numeric_kind_meets_every_writing_of_a_rival_number():
    numeric = {c.kind for c in CASES if c.trick.label == "the value alone" and expected(c.sample)[0].isdigit()}
    assert len(numeric) >= 10
    for writing in (
        "split by a space",
        "in dotted groups",
        "split by a hyphen",
        "in words",
        "in scientific notation",
        "with an ordinal suffix",
    ):
        assert {c.kind for c in CASES if c.trick.label == f"value or a rival {writing}"} >= numeric, writing


def test_the_corpus_has_the_gamed_and_the_honest():
    gamed = [c for c in CASES if c.trick.gamed]
    assert len(gamed) >= 1500 and len(CASES) - len(gamed) >= 400


def test_the_disguises_change_the_text_a_reader_sees_and_nothing_else():
    (case,) = [
        c
        for c in CASES
        if c.kind == "niah single (value, number)" and c.trick.label == "value or a rival split by a space"
    ]
    assert case.text.split(" or ")[1].count(" ") == 1
    assert fullwidth("ab-12") == "\uff41\uff42-\uff11\uff12"
    assert in_words("7654321") == "seven million six hundred fifty-four thousand three hundred twenty-one"
