"""`question_position`: every family takes it, the question moves before the document with the same needles,
the prompt stays at its exact length, the default leaves recipes, ids and prompts as they were, and a suite's
`question_positions` runs each task under each position, paired on the needles."""

from __future__ import annotations

from collections import defaultdict

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import needle_key
from ctxprobe.tasks.registry import get_family, known_families, validate_params
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite

GEMMA = "local:gemma3-270m"
CASES = [
    ("niah", {}),
    ("niah", {"variant": "multikey", "template": "ruler"}),
    ("recall", {"kind": "uuid"}),
    ("multihop", {"kind": "keychain"}),
    ("multihop", {"kind": "vartrack", "template": "ruler"}),
    ("aggregate", {}),
    ("aggregate", {"kind": "frequent_words"}),
]


def _build(
    family: str,
    params: dict[str, object],
    position: str,
    mode: str = "completions",
    depth: float = 30.0,
    counter: str = GEMMA,
    length: int = 1500,
):
    builder = builder_for(token_counter(counter))
    extra = {} if position == "end" else {"question_position": position}
    recipe = builder.recipe(
        family=family, params={**params, **extra}, context_tokens=length, depth=depth, seed=3, mode=mode
    )
    return builder, builder.build(recipe)


# Families whose question is the prompt's last turn by construction (MRCR's final request): the parameter is
# there, and any position but the end is refused in one line.
AT_THE_END = {"mrcr"}


def test_every_family_takes_the_parameter_and_refuses_an_unknown_position() -> None:
    for name in known_families():
        family = get_family(name)
        assert family.Params.model_fields["question_position"].default == "end"
        if name in AT_THE_END:
            with pytest.raises(UserError, match="question_position"):
                validate_params(family, {"question_position": "start"})
            continue
        assert validate_params(family, {"question_position": "start"}).question_position == "start"  # type: ignore[attr-defined]
    with pytest.raises(UserError, match="question_position"):
        validate_params(get_family("niah"), {"question_position": "middle"})


def test_the_default_leaves_recipes_and_ids_as_they_were() -> None:
    full = validate_params(get_family("niah"), {}).model_dump(mode="json")
    assert "question_position" not in full  # the recorded parameters of a default task are unchanged
    spelled = Recipe(family="niah", params={**full, "question_position": "end"}, context_tokens=1024)
    plain = Recipe(family="niah", params=full, context_tokens=1024)
    assert validate_params(get_family("niah"), spelled.params).model_dump(mode="json") == plain.params
    start = Recipe(family="niah", params={**full, "question_position": "start"}, context_tokens=1024)
    assert start.sample_id() != plain.sample_id() and needle_key(start) == needle_key(plain)


@pytest.mark.parametrize("family,params", CASES)
@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_start_puts_the_question_before_the_document_with_the_same_needles(
    family: str, params: dict[str, object], mode: str
) -> None:
    _, end = _build(family, params, "end", mode)
    _, start = _build(family, params, "start", mode)
    _, both = _build(family, params, "both", mode)
    assert end.question == start.question == both.question
    assert [(n.role, n.answer) for n in end.needles] == [(n.role, n.answer) for n in start.needles]
    assert end.expected == start.expected == both.expected
    q = end.question
    assert end.prompt.count(q) == start.prompt.count(q) == 1 and both.prompt.count(q) == 2
    first_fact = min([n.char_offset for n in start.needles] or [len(start.prompt)])
    asked = start.prompt.index(q)
    assert asked < first_fact and end.prompt.index(q) > max([n.char_offset for n in end.needles] or [0])
    assert asked < len(start.prompt) // 4 < len(start.prompt) * 3 // 4 < end.prompt.index(q)  # word lists too
    if mode == "completions":  # a base model still continues the answer prefix
        assert (
            end.answer_prefix and start.prompt.endswith(end.answer_prefix) and both.prompt.endswith(end.answer_prefix)
        )
    else:
        assert start.answer_prefix == ""
    for spot in start.needles:  # each needle once, where its record says
        assert start.prompt.count(spot.text.strip()) == 1
        assert start.prompt[spot.char_offset :].startswith(spot.text)


@pytest.mark.parametrize("family,params", CASES[:5])
def test_start_and_both_prompts_are_at_their_exact_length(family: str, params: dict[str, object]) -> None:
    for position in ("start", "both"):
        builder, sample = _build(family, params, position, length=2048)
        counted = builder.counter.count_many([sample.prompt])[0] + builder.counter.bos_tokens
        assert counted == sample.planned_tokens
        assert 2048 - tolerance(2048) <= sample.planned_tokens <= 2048
        for spot in sample.needles:  # token offsets: the prompt's text before the needle counts that many tokens
            before = builder.counter.count_many([sample.prompt[: spot.char_offset]])[0] + builder.counter.bos_tokens
            assert abs(before - spot.token_offset) <= 1


def test_start_at_depth_zero_opens_the_document_after_the_question() -> None:
    _, sample = _build("niah", {}, "start", depth=0.0)
    head, _, rest = sample.prompt.partition(sample.question)
    assert head.endswith("afterwards.\n\n") and rest.startswith("\n\n" + sample.needles[0].text.strip())


def test_a_suite_runs_each_task_at_each_position_paired_on_the_needles() -> None:
    suite = Suite.model_validate(
        {
            "name": "qp",
            "lengths": [1024],
            "depths": [0, 100],
            "samples": 2,
            "question_positions": ["end", "start"],
            "tasks": [{"family": "niah"}, {"family": "recall"}],
        }
    )
    recipes = suite.recipes(builder_for(token_counter("estimate")).recipe_tokenizer)
    assert len(recipes) == suite.size() == 2 * 2 * 2 * 2
    by_key: dict[str, set[str]] = defaultdict(set)
    for recipe in recipes:
        by_key[needle_key(recipe)].add(recipe.params.get("question_position", "end"))
    assert len(by_key) == 2 * 2 * 2 and all(v == {"end", "start"} for v in by_key.values())
    with_templates = Suite.model_validate({**suite.model_dump(), "templates": ["ctxprobe", "ruler"]})
    layouts = {
        (r.family, r.params.get("template"), r.params.get("question_position", "end"))
        for r in with_templates.recipes(builder_for(token_counter("estimate")).recipe_tokenizer)
    }
    assert layouts == {("niah", t, q) for t in ("ctxprobe", "ruler") for q in ("end", "start")} | {
        ("recall", None, "end"),
        ("recall", None, "start"),
    }


def test_a_question_at_the_start_shares_no_prefix_across_depths() -> None:
    from ctxprobe.evals.run.send.order import expected_cached_tokens, send_groups

    builder = builder_for(token_counter("estimate"))
    for position, shared in (("end", True), ("start", False), ("both", False)):
        params = {} if position == "end" else {"question_position": position}
        recipes = [builder.recipe(family="niah", params=params, context_tokens=1024, depth=d) for d in (50, 75, 100)]
        prompts = [builder.build(r).prompt for r in recipes]
        common = len(_common_prefix(prompts))
        groups = send_groups(recipes, "cache-aware")
        assert (len(groups) == 1) is shared and (expected_cached_tokens(groups)[1] > 0) is shared
        head = prompts[0].index("afterwards.") + len("afterwards.")
        assert (common > head + 100) is shared  # at the start, the prompts part right after the instruction


def _common_prefix(texts: list[str]) -> str:
    first = texts[0]
    n = next((i for i in range(len(first)) if any(t[i : i + 1] != first[i] for t in texts)), len(first))
    return first[:n]


def test_qa_asks_before_its_documents() -> None:
    from pathlib import Path

    dataset = f"hf:{Path(__file__).parent / 'fixtures' / 'qa' / 'squad.json'}"
    _, end = _build("qa", {"dataset": dataset}, "end", counter="estimate", length=1024)
    _, start = _build("qa", {"dataset": dataset}, "start", counter="estimate", length=1024)
    assert end.question == start.question and end.expected == start.expected
    asked, documents = start.prompt.index(start.question), start.prompt.index("The following are given documents.")
    assert start.prompt.index("Answer the question based on the given documents.") < asked < documents
    assert start.prompt.endswith("\n\nAnswer:") and start.prompt.count(start.question) == 1
    assert end.prompt.index(end.question) > end.prompt.index("Document 1:")
