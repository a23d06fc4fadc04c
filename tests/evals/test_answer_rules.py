"""The answer kinds of a needle file, each rule on outputs written by hand: what it accepts, what it refuses,
and the normalisation (case, punctuation, whitespace, articles, number formats) docs/tasks.md documents
("Answer rules")."""

from __future__ import annotations

from typing import Any

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.families.needles_rules import normalise
from ctxprobe.tasks.sample import Sample

ITEM: dict[str, Any] = {
    "name": "t",
    "needles": ["The lighthouse was painted green."],
    "max_tokens": 32,
    "question": "What colour was the lighthouse painted?",
    "answer_prefix": "Answer:",
}


def sample(kind: str, answers: list[str], mode: str = "completions", **extra: Any) -> Sample:
    builder = builder_for(token_counter("estimate"))
    params = {**ITEM, "kind": kind, "answers": answers, **extra}
    return builder.build(builder.recipe(family="needles", params=params, context_tokens=1024, mode=mode))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**The Eiffel-Tower.**", "eiffel tower"),
        ("  New   York ", "new york"),
        ("U.S.A.", "usa"),
        ("Café", "café"),
        ("ＧＲＥＥＮ", "green"),
        ("an apple", "apple"),
        ("it's", "its"),
        ("sea/green", "sea green"),
        ("Theatre", "theatre"),  # an article only as a whole word
    ],
)
def test_normalisation(text: str, expected: str) -> None:
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("output", "correct"),
    [
        (" green.\nThe keeper", True),
        (" Green", True),
        (" **green**", True),
        (" the green one", False),
        (" green. It was repainted blue later.", True),  # the first sentence is the answer
        (" blue", False),
        (" greenish", False),
        (" I think it was green", False),
        (" Colour: green", True),
        ("", False),
    ],
)
def test_exact_is_the_answer_itself(output: str, correct: bool) -> None:
    assert score_sample(sample("exact", ["green", "dark green"]), output).correct is correct


def test_exact_takes_any_alias() -> None:
    assert score_sample(sample("exact", ["green", "dark green"]), " Dark-green.").correct


@pytest.mark.parametrize(
    ("output", "correct"),
    [
        (" 1482 steps", True),
        (" 1,482.", True),
        (" exactly 1482.0 steps", True),
        (" 1 482", False),
        (" 1483 steps", False),
        (" about 14820", False),
        (" one thousand four hundred eighty-two", False),
        (" 1482", True),
        (" -1482", False),
        (" 31 flights, 1482 steps", False),  # every number is an answer offered
        (" 1482 steps, 1482 in all", True),
        (" 1482, 1483.", False),
        (" 1483, 1482.", False),
        (" 1482 or 1 483", False),
        (" 1482 or \uff11\uff14\uff18\uff13", False),
        (" \uff11\uff14\uff18\uff12", True),
        (" 1482 is wrong.", False),
        (" 1482. Actually, scratch that: 1483.", False),
        (" 1483. Actually, scratch that: 1482.", True),
    ],
)
def test_number_compares_values(output: str, correct: bool) -> None:
    assert score_sample(sample("number", ["1482"]), output).correct is correct


def test_number_skips_what_the_question_itself_says() -> None:
    item = sample("number", ["12"], question="How many moons does planet 9 have?")
    assert score_sample(item, " Planet 9 has 12 moons.").correct
    assert not score_sample(item, " Planet 9 has 13 moons.").correct


@pytest.mark.parametrize(
    ("output", "found", "others"),
    [
        (" tulips, lavender and sunflowers", 3, 0),
        (" Sunflowers, tulips, lavender.", 3, 0),
        (" tulips and lavender", 2, 0),
        (" roses", 0, 1),
        (" tulip, lavender, sunflower", 1, 2),  # whole words: a singular is another word
        (" tulips, lavender, sunflowers, roses", 3, 1),
        (" tulips, lavender, sunflowers or roses", 3, 1),
        (" tulips, lavender and sunflowers, all planted in spring", 3, 0),  # prose around the list is no item
        (" The flowers: tulips, lavender, sunflowers", 3, 0),
    ],
)
def test_set_needs_every_member_in_any_order_and_nothing_else(output: str, found: int, others: int) -> None:
    score = score_sample(sample("set", ["tulips", "lavender", "sunflowers"]), output)
    # recall times precision: the members found of 3, times the share of the items offered that are members
    assert score.partial == pytest.approx(found / 3 * (found / (found + others) if found else 0.0))
    assert score.correct is (found == 3 and others == 0)


def test_set_reads_a_list_over_several_lines() -> None:
    score = score_sample(sample("set", ["tulips", "lavender", "sunflowers"]), "\n- tulips\n- lavender\n- sunflowers\n")
    assert score.correct


@pytest.mark.parametrize(
    ("output", "correct"),
    [
        (" in a cedar chest under the window", True),
        (" a Cedar-Chest.", True),
        (" the cedar chests", False),
        (" a pine chest", False),
        (" cedarchest", False),
        (" a cedar chest or a pine box", False),
        (" a cedar chest. Or maybe a pine box.", False),
        (" either a cedar chest or a pine box", False),
        (" a cedar chest is wrong.", False),
        (" a pine box. Actually, scratch that: a cedar chest.", True),
        (" a \u0441edar chest", True),
    ],
)
def test_contains_finds_an_alias_as_whole_words(output: str, correct: bool) -> None:
    assert score_sample(sample("contains", ["cedar chest"]), output).correct is correct


def test_chat_mode_reads_the_whole_reply() -> None:
    item = sample("contains", ["cedar chest"], mode="chat")
    assert score_sample(item, "Sure! She keeps it in a cedar chest.\n\nAnything else?").correct
    # every paragraph is the answer: a hedge is no denial, an alternative in a later paragraph is offered
    assert score_sample(item, "I do not know.\n\nMaybe a cedar chest.").correct
    assert not score_sample(item, "A cedar chest.\n\nOr maybe a pine box.").correct
    assert not score_sample(item, "A cedar chest.\n\nJust kidding.").correct


@pytest.mark.parametrize(
    ("output", "correct"),
    [
        # Gemma 3 270M's run-on after its answer in a recorded needle-file run: prose, no item offered
        (
            " tulips, lavender and sunflowers. By the time a young clerk arrived, the hooks had already been returned and "
            "the reading room was ordinary. It was",
            True,
        ),
        ("\n- tulips\n- lavender\n- sunflowers\n- roses\n", False),
        (" tulips, lavender, sunflowers. Roses too.", False),
        (" tulips, lavender, sunflowers. Or maybe roses.", False),
        (" Here they are: tulips, lavender, sunflowers.", True),
    ],
)
def test_set_reads_items_where_the_answer_lists_them(output: str, correct: bool) -> None:
    assert score_sample(sample("set", ["tulips", "lavender", "sunflowers"]), output).correct is correct
