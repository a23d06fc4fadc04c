"""The absent questions' scorer against replies written to game it (`tests/evals/adversary/absent.py`): every
honest abstention credited, every value of the asked kind wrong and `hallucinated`, a reply with neither wrong
and unattributed, on every value kind that takes `absent`, both modes."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from tests.evals.adversary.absent import KINDS, REPLIES, cases

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind} | {c.label}" for c in CASES])
def test_absent_verdict(case):
    score = score_sample(case.sample, case.text)
    assert (score.correct, score.attribution) == (case.correct, case.attribution), (case.label, case.text, score)
    assert score.partial == float(case.correct)
    assert score.unit == ("reply" if case.sample.recipe.mode == "chat" else "first sentence")


def test_every_kind_meets_every_reply_family_in_both_modes():
    assert {c.kind for c in CASES} == {k.label for k in KINDS}
    assert {k.mode for k in KINDS} == {"completions", "chat"}
    for family in ("abstains", "invents", "neither"):
        assert {c.kind for c in CASES if c.label in {label for f, label, _ in REPLIES if f == family}} == \
            {k.label for k in KINDS}, family


def test_an_invented_value_is_extracted_as_written():
    case = next(c for c in CASES if c.label == "I don't know, maybe a value" and c.sample.recipe.mode == "chat")
    assert score_sample(case.sample, case.text).extracted == [case.text.rsplit(" ", 1)[1]]


def test_completions_reads_its_first_sentence_and_not_the_run_on():
    """A base model runs on after its answer and may quote the next needle its prompt holds: not read."""
    sample = next(k for k in KINDS if k.mode == "completions").sample()
    run_on = f" not given. The special magic number for another key is {sample.needles[0].answer}."
    score = score_sample(sample, run_on)
    assert score.correct and score.extracted == ["not given"]


def test_a_hallucination_that_quotes_a_needle_keeps_its_depth_and_an_invented_one_none():
    for case in CASES:
        if case.label in ("a refusal that quotes another needle's value", "I don't know, maybe a value"):
            score = score_sample(case.sample, case.text)
            quoted = case.sample.needles[0]  # the needle the refusal quotes (`other`)
            expected = quoted.depth_pct if case.label.startswith("a refusal") else None
            assert score.rival_depth == expected, case.kind
