"""The scorer against answers written to game it (`tests/evals/adversary_cases.py`): for every answer kind,
answers that list candidates, negate the value, repeat the question, echo the needle sentence or put the
value in a code block, each with the verdict it must get."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from tests.evals.adversary_cases import cases

CASES = cases()


@pytest.mark.parametrize("kind,sample,label,text,correct", CASES,
                         ids=[f"{k} | {label}" for k, _, label, _, _ in CASES])
def test_adversary_verdict(kind, sample, label, text, correct):
    score = score_sample(sample, text)
    assert score.correct is correct, (label, text, score)
    if not correct:
        assert score.partial < 1.0, (label, text, score)


def test_every_kind_meets_every_trick():
    tried = {(k, label) for k, _, label, _, _ in CASES}
    kinds = {k for k, *_ in CASES}
    for trick in ("lists candidates", "negates the value", "repeats the question", "value in a code block"):
        assert {k for k, label in tried if label == trick} == kinds, trick
