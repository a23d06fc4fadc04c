"""The scorer against answers written to game it (`tests/evals/adversary_cases.py`): for every answer kind in both
modes, answers that list candidates, negate the value before or after it, withdraw it for a rival ("X. Actually,
scratch that: Y."), repeat the question, echo the needle sentence, put the value in a code block, or offer a rival
disguised (grouped digits, look-alike letters, fullwidth forms), each with the verdict it must get."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from tests.evals.adversary_cases import CHAIN_ANSWERS, KINDS, NOT_TRIED, cases, expected, fullwidth, is_gamed

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
    kinds = {k.label: k.sample().expected.kind for k in KINDS}
    assert {k for k, _ in tried} == set(kinds)
    assert {k.mode for k in KINDS} == {"completions", "chat"}
    for trick in ("lists candidates", "negates the value", "repeats the question", "value in a code block",
                  "X is incorrect", "X is wrong", "X is not the answer", "X, scratch that: rival", "X, no wait: rival",
                  "rival, scratch that: X", "value or a rival in fullwidth characters"):
        wanted = {k for k, kind in kinds.items() if trick not in NOT_TRIED.get(kind, set())}
        assert {k for k, label in tried if label == trick} == wanted, trick


def test_every_numeric_kind_meets_every_grouping_of_a_rival():
    numeric = {k for k, sample, label, _, _ in CASES if label == "the value alone" and expected(sample)[0].isdigit()}
    assert len(numeric) >= 10
    for grouping in ("split by a space", "in dotted groups", "in comma groups", "in spaced groups",
                     "in thin-space groups", "in underscore groups"):
        assert {k for k, _, label, _, _ in CASES if label == f"value or a rival {grouping}"} == numeric, grouping


def test_the_corpus_has_the_gamed_and_the_honest():
    gamed = [c for c in CASES if is_gamed(c[2])]
    assert all(not c[4] for c in gamed) and all(c[4] for c in CASES if not is_gamed(c[2]))
    assert len(gamed) >= 800 and len(CASES) - len(gamed) >= 300
    assert not is_gamed(CHAIN_ANSWERS[0][0])


def test_the_disguises_change_the_text_a_reader_sees_and_nothing_else():
    (case,) = [c for c in CASES
               if c[0] == "niah single (value, number)" and c[2] == "value or a rival split by a space"]
    assert case[3].split(" or ")[1].count(" ") == 1
    assert fullwidth("ab-12") == "\uff41\uff42-\uff11\uff12"
