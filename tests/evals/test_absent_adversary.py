"""The absent questions' scorer against replies written to game it (`tests/evals/adversary/absent.py`): every
honest abstention credited, every value of the asked kind wrong and `hallucinated`, a reply with neither wrong
and unattributed, on every value kind that takes `absent`, both modes."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from tests.evals.adversary.absent import KINDS, REPLIES, cases
from tests.tiered import tiered

CASES = cases()


# The fast tier keeps each value kind in each mode with each verdict, and each reply, once (tests/tiered.py).
@pytest.mark.parametrize(
    "case",
    tiered(CASES, [f"{c.kind} | {c.label}" for c in CASES], lambda c: [(c.kind, c.correct, c.attribution), c.label]),
)
def test_absent_verdict(case):
    score = score_sample(case.sample, case.text)
    assert (score.correct, score.attribution) == (case.correct, case.attribution), (case.label, case.text, score)
    assert score.partial == float(case.correct)
    assert score.unit == ("reply" if case.sample.recipe.mode == "chat" else "first sentence")


def test_every_kind_meets_every_reply_family_in_both_modes():
    assert {c.kind for c in CASES} == {k.label for k in KINDS}
    assert {k.mode for k in KINDS} == {"completions", "chat"}
    for family in ("abstains", "invents", "neither"):
        assert {c.kind for c in CASES if c.label in {label for f, label, _ in REPLIES if f == family}} == {
            k.label for k in KINDS
        }, family


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


@pytest.mark.parametrize(
    ("text", "truncated"),
    [
        ("Based on the text, the special magic number for", True),  # cut before any value or abstention
        ("The special magic number is 12345", True),  # cut inside a value: too short to be of its kind yet
        ("The text does not mention a special magic number for", False),  # it abstained: judged, and correct
        ("The special magic number is 1234567, and", False),
    ],
)  # a whole value: judged, and hallucinated
def test_a_chat_reply_cut_off_by_its_budget_is_truncated_only_before_a_value_or_an_abstention(text, truncated):
    from ctxprobe.evals.records.record import Response
    from ctxprobe.evals.scoring.truncation import cut_off

    sample = next(k for k in KINDS if k.mode == "chat" and "number" in k.label).sample()
    score = score_sample(sample, text)
    response = Response(endpoint="chat", text=text, latency_s=0.1, finish_reason="length")
    assert (cut_off(sample, response, score) is not None) is truncated, score
