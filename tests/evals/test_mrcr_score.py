"""The `mrcr` answer kind: MRCR's published rule (the string to prepend required at the start, then difflib's
SequenceMatcher ratio of the rest), checked against difflib called here, and on answers written to game it."""

from __future__ import annotations

import random
from difflib import SequenceMatcher

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import build_sample, token_counter
from ctxprobe.tasks.sample import Recipe, Sample


def sample(mode: str) -> Sample:
    return build_sample(Recipe(family="mrcr", context_tokens=4096, seed=2, mode=mode), token_counter("estimate"))


def published_grade(response: str, answer: str, prepend: str) -> float:
    """The MRCR dataset card's grade, written out here."""
    if not response.startswith(prepend):
        return 0
    return SequenceMatcher(None, response[len(prepend) :], answer[len(prepend) :]).ratio()


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_partial_is_the_published_grade_on_perturbed_answers(mode: str) -> None:
    s = sample(mode)
    answer, prepend = s.expected.answers
    rng = random.Random(5)
    lead = " " if mode == "completions" else ""  # a base model's space after `Assistant:`
    for _ in range(200):
        chars = list(answer)
        for _ in range(rng.randint(0, 30)):
            chars[rng.randrange(len(prepend), len(chars))] = rng.choice("abcxyz \n")
        response = "".join(chars[: rng.randint(len(prepend), len(chars))])
        score = score_sample(s, lead + response)
        assert score.partial == pytest.approx(published_grade(response, answer, prepend))
        assert score.correct == (response.strip() == answer.strip())


def test_the_string_is_required_first_and_exact_means_nothing_else() -> None:
    s = sample("chat")
    answer, prepend = s.expected.answers
    body = answer[len(prepend) :]
    assert score_sample(s, answer).correct and score_sample(s, answer).partial == 1.0
    for gamed in (body, f"Sure! {answer}", prepend.lower() + body, f"{prepend[:-1]}{body}"):
        result = score_sample(s, gamed)
        assert result.partial == 0.0 and not result.correct, gamed
    longer = score_sample(s, answer + "\n\nI hope you enjoyed it!")
    assert not longer.correct and 0.8 < longer.partial < 1.0


def test_completions_read_up_to_the_next_turn() -> None:
    s = sample("completions")
    answer = s.expected.answers[0]
    ran_on = score_sample(s, f" {answer}\n\nUser: write a poem about owls\n\nAssistant: ...")
    assert ran_on.correct and ran_on.partial == 1.0
