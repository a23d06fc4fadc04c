"""The `name` answer kind (the latent family): the character's name, and no other listed name in its place,
checked on answers written to game it."""

from __future__ import annotations

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import build_sample, token_counter
from ctxprobe.tasks.families.latent_table import character_names
from ctxprobe.tasks.sample import Recipe, Sample


def sample(mode: str = "completions") -> Sample:
    return build_sample(Recipe(family="latent", context_tokens=1024, seed=2, mode=mode), token_counter("estimate"))


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_the_name_alone_or_in_a_sentence_is_correct(mode: str) -> None:
    s = sample(mode)
    name = s.expected.answers[0]
    # completions mode reads the first line (a base model runs on); chat mode the whole reply, so a later
    # paragraph that names another character offers it (test below)
    run_on = "\nQuestion: Megan?" if mode == "completions" else "\n\nThat is all."
    for text in (f" {name}", f" {name}.", f" **{name}**", f" {name.upper()}{run_on}", f"The character is {name}."):
        score = score_sample(s, text)
        assert score.correct and score.partial == 1.0 and score.extracted == [name], text


def test_another_name_beside_or_instead_of_it_is_wrong() -> None:
    s = sample()
    name = s.expected.answers[0]
    other = next(n for n in character_names() if n != name)
    for text in (
        f" {other}",
        f" {name} or {other}",
        f" {other}, not {name}",
        f" {name}{name[-1]}",
        " nobody",
        f" {', '.join(character_names())}",
    ):
        score = score_sample(s, text)
        assert not score.correct and score.partial == 0.0, text
    assert score_sample(s, f" {name} or {other}").extracted == [name, other]


def test_in_chat_a_later_paragraph_is_part_of_the_answer() -> None:
    s = sample("chat")
    name = s.expected.answers[0]
    other = next(n for n in character_names() if n != name)
    assert not score_sample(s, f"{name}.\n\n{other}, by contrast, stayed home.").correct
    assert not score_sample(s, f"{name}.\n\nOr maybe {other}.").correct
    assert score_sample(s, f"{name}.\n\nThat is the character who owns it.").correct


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_a_negated_name_is_neither_credited_nor_a_rival(mode: str) -> None:
    s = sample(mode)
    name = s.expected.answers[0]
    other = next(n for n in character_names() if n != name)
    for text, right in (
        (f" It is not {name}.", False),
        (f" It isn't {name}; it is {other}.", False),
        (f" It is not {other}; it is {name}.", True),
        (f" {name}, not {other}.", True),
    ):
        score = score_sample(s, text)
        assert score.correct is right and score.partial == float(right), text


def test_a_complete_answer_naming_nobody_is_wrong_not_cut_off() -> None:
    from ctxprobe.evals.records.record import Response
    from ctxprobe.evals.scoring.truncation import cut_off

    s = sample()
    asked = s.question.rsplit(" ", 1)[-1].rstrip("?")  # the question's own words, answered back
    for text in (
        f" {asked}.\n\nThe character's name is {asked}.\n\nThe character's",
        " the same as the book.\n\nThe character's name is the same as the book.\n\nThe character's",
    ):
        score = score_sample(s, text)
        assert not score.correct and score.extracted == [text.strip().split("\n")[0]]
        response = Response(endpoint="http://x", text=text, finish_reason="length", completion_tokens=24)
        assert cut_off(s, response, score) is None, text
    unfinished = Response(endpoint="http://x", text=" the one who has", finish_reason="length", completion_tokens=24)
    assert cut_off(s, unfinished, score_sample(s, unfinished.text)) == "it stopped before its answer line ended"
