"""Attribution of a wrong answer (tasks/answers/attribution.py), as `score_sample` records it: another needle's
value of the prompt is a `rival` with that needle's depth, any other wrong answer `other`, a right one None.

Checked on real nested chains (every prompt holds the needles of the chain's cells that fall inside it, with
the estimate counter: no model needed) and on hand-built samples for the cases a chain does not show."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.answers.attribution import ATTRIBUTED_KINDS
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.sample import NeedleSpot, Sample
from ctxprobe.tasks.suite import parse_suite
from tests.evals.factories import make_sample


@pytest.fixture(scope="module")
def chain() -> list[Sample]:
    suite = parse_suite(
        {
            "name": "t",
            "lengths": "1k,2k",
            "depths": "0,50,100",
            "samples": 1,
            "layout": "nested",
            "tasks": [{"family": "niah", "params": {}}],
        },
        "bad suite",
    )
    builder = builder_for(token_counter("estimate:4"))
    return [builder.build(r) for r in suite.recipes(builder.recipe_tokenizer)]


def test_each_rival_is_named_with_its_depth(chain: list[Sample]) -> None:
    """Every other needle of every prompt, answered in its place, is that needle's rival at its own depth."""
    checked = 0
    for sample in chain:
        others = [n for n in sample.needles if n.role == "distractor"]
        assert others, "a nested prompt holds its chain's other needles"
        for needle in others:
            score = score_sample(sample, f" {needle.answer}. It was hidden in the text.")
            assert not score.correct
            assert (score.attribution, score.rival_depth) == ("rival", needle.depth_pct)
            checked += 1
    assert checked >= len(chain) * 2


def test_a_value_in_no_needle_is_other_and_a_right_answer_none(chain: list[Sample]) -> None:
    held = {n.answer for s in chain for n in s.needles}
    stranger = next(v for v in ("1234567", "7654321", "1111111") if v not in held)
    for sample in chain:
        wrong = score_sample(sample, f" {stranger}.")
        assert (wrong.correct, wrong.attribution, wrong.rival_depth) == (False, "other", None)
        silent = score_sample(sample, " not stated anywhere.")
        assert (silent.correct, silent.attribution) == (False, "other")
        right = score_sample(sample, f" {sample.expected.answers[0]}.")
        assert (right.correct, right.attribution, right.rival_depth) == (True, None, None)


def test_a_rival_is_read_in_the_scorer_unit(chain: list[Sample]) -> None:
    """A base model runs on after its answer and may quote another needle later: only the unit the scorer reads
    (the first sentence) attributes; a rival written in a disguise still counts in its canonical form."""
    sample = next(s for s in chain if len([n for n in s.needles if n.role == "distractor"]) >= 2)
    first, later = [n for n in sample.needles if n.role == "distractor"][:2]
    score = score_sample(sample, f" {first.answer}.\nThe special magic number for x is {later.answer}.")
    assert (score.attribution, score.rival_depth) == ("rival", first.depth_pct)
    grouped = score_sample(sample, f" {int(first.answer):,}.")  # 1,234,567: the same number
    assert (grouped.attribution, grouped.rival_depth) == ("rival", first.depth_pct)


def _with_needles(sample: Sample, needles: list[tuple[str, str, float]]) -> Sample:
    spots = [
        NeedleSpot(
            role=role,
            text=f"needle {answer}",
            answer=answer,
            char_offset=i,
            token_offset=i,  # type: ignore[arg-type]
            depth_pct=depth,
        )
        for i, (role, answer, depth) in enumerate(needles)
    ]
    return sample.model_copy(update={"needles": spots})


def test_the_asked_needles_own_values_are_never_rivals() -> None:
    """A chain's hops are the asked needle's own: naming one is wrong (or partial), never a rival's answer."""
    sample = _with_needles(
        make_sample(["9012345"], kind="chain", chain=["3456789", "9012345"]),
        [("target", "9012345", 80.0), ("hop", "3456789", 20.0), ("distractor", "5550001", 40.0)],
    )
    hop = score_sample(sample, " 3456789.")
    assert (hop.correct, hop.attribution) == (False, "other")
    rival = score_sample(sample, " 5550001.")
    assert (rival.attribution, rival.rival_depth) == ("rival", 40.0)


def test_chat_and_list_answers() -> None:
    sample = _with_needles(
        make_sample(["1234567", "2345678"], kind="values", mode="chat"),
        [("target", "1234567", 10.0), ("target", "2345678", 60.0), ("distractor", "3456789", 35.0)],
    )
    partial = score_sample(sample, "The numbers are 1234567 and 3456789.")
    assert (partial.correct, partial.attribution, partial.rival_depth) == (False, "rival", 35.0)
    short = score_sample(sample, "Only 1234567.")
    assert (short.correct, short.attribution) == (False, "other")


def test_free_text_and_family_rules_stay_unattributed() -> None:
    """No candidates of a kind to compare (free text), or a family's own rule: None, never a guess."""
    clause = make_sample(["the tenant pays the water bill"], kind="string", mode="chat")
    assert score_sample(clause, "The landlord pays it.").attribution is None
    assert "mrcr" not in ATTRIBUTED_KINDS and "nodes" not in ATTRIBUTED_KINDS
