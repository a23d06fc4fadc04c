"""The `nodes` answer kind: GraphWalks' rule (the last line's `Final Answer: [...]`, F1 partial, exact set
correct), checked against a set F1 written here and on answers written to game it."""

from __future__ import annotations

import random

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import build_sample, token_counter
from ctxprobe.tasks.families.graphwalk import final_answer, set_f1
from ctxprobe.tasks.sample import Recipe, Sample


def dice(a: set[str], b: set[str]) -> float:
    """F1 as the Dice coefficient, 2|A & B| / (|A| + |B|): an independent form of precision/recall's F1."""
    return 1.0 if not a and not b else 2 * len(a & b) / (len(a) + len(b))


def test_f1_agrees_with_an_independent_dice_coefficient() -> None:
    rng = random.Random(3)
    pool = [f"n{i}" for i in range(12)]
    for _ in range(2000):
        a, b = set(rng.sample(pool, rng.randint(0, 8))), set(rng.sample(pool, rng.randint(0, 8)))
        assert set_f1(a, b) == pytest.approx(dice(a, b))


def sample(mode: str, query: str = "bfs") -> Sample:
    return build_sample(
        Recipe(family="graphwalk", params={"query": query}, context_tokens=2048, seed=1, mode=mode),
        token_counter("estimate"),
    )


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_scores_follow_the_published_rule(mode: str) -> None:
    s = sample(mode)
    truth = list(s.expected.answers)
    assert len(truth) >= 2
    lead = "" if mode == "completions" else "Final Answer: ["
    tail = "\nmore text the base model ran on" if mode == "completions" else ""

    def score(nodes: list[str]) -> tuple[bool, float]:
        result = score_sample(s, lead + ", ".join(nodes) + "]" + tail)
        return result.correct, result.partial

    assert score(truth) == (True, 1.0)
    assert score(truth[::-1] + truth[:1]) == (True, 1.0)  # order and repeats do not matter: a set
    assert score(truth[:1]) == (False, pytest.approx(dice(set(truth[:1]), set(truth))))
    assert score([*truth, "0123456789"]) == (False, pytest.approx(dice({*truth, "0123456789"}, set(truth))))
    assert score(["0123456789"]) == (False, 0.0)


def test_chat_answer_must_stand_on_the_last_line() -> None:
    s = sample("chat", "parents")
    good = "Final Answer: [" + ", ".join(s.expected.answers) + "]"
    assert score_sample(s, f"Let me think.\n{good}\n\n").correct
    for gamed in (
        f"{good}\nI hope this helps.",
        ", ".join(s.expected.answers),
        f"final answer: {s.expected.answers}",
        f"Final Answer: [{', '.join(s.expected.answers)}",
    ):
        result = score_sample(s, gamed)
        assert not result.correct and result.partial == 0.0, gamed
    assert score_sample(s, "Final Answer: [ab, cd").extracted == ["ab", "cd"]  # what it listed, unclosed


def test_final_answer_parsing() -> None:
    assert final_answer("x\nFinal Answer: [a, b ,c]") == ["a", "b", "c"]
    assert final_answer("Final Answer: []") == [] and final_answer("Final Answer:[a]") == ["a"]
    assert final_answer("Final Answer: a, b") is None and final_answer("[a, b]") is None
