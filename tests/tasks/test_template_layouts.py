"""Template sensitivity on the task side: `templates: [ctxprobe, ruler]` runs each task that has a `template`
parameter once per layout with the same needles, and `length_convention: ruler` leaves RULER's 128
generated tokens out of the prompt."""

from __future__ import annotations

from collections import defaultdict

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.families.framing import RULER_GENERATION_TOKENS
from ctxprobe.tasks.identity import needle_key
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite

LAYOUTS = ("ctxprobe", "ruler")


def _suite(tasks: list[dict[str, object]]) -> Suite:
    return Suite.model_validate(
        {
            "name": "tsens",
            "lengths": [1024, 2048],
            "depths": [0, 50, 100],
            "samples": 2,
            "templates": list(LAYOUTS),
            "tasks": tasks,
        }
    )


def _recipes(suite: Suite) -> list[Recipe]:
    builder = builder_for(token_counter("estimate"))
    return suite.recipes(builder.recipe_tokenizer)


def test_a_niah_task_runs_under_both_layouts_with_the_same_needles() -> None:
    recipes = _recipes(_suite([{"family": "niah", "params": {"variant": "multikey", "distractors": 2}}]))
    assert len(recipes) == 2 * 2 * 3 * 2  # two layouts of every (length, sample, depth)
    by_key: dict[str, dict[str, Recipe]] = defaultdict(dict)
    for recipe in recipes:
        by_key[needle_key(recipe)][recipe.params["template"]] = recipe
    assert len(by_key) == 2 * 3 * 2 and all(set(pair) == set(LAYOUTS) for pair in by_key.values())

    builder = builder_for(token_counter("estimate"))
    for pair in by_key.values():
        base, ruler = (builder.build(pair[name]) for name in LAYOUTS)
        assert base.sample_id != ruler.sample_id  # two samples, not one run twice
        assert base.expected.answers == ruler.expected.answers
        assert [(n.role, n.answer) for n in base.needles] == [(n.role, n.answer) for n in ruler.needles]
        assert len(base.needles) == 3  # the target and both distractors, in both layouts
        assert base.prompt != ruler.prompt and base.prompt_sha256 != ruler.prompt_sha256
        assert base.prompt.endswith(f"\n\n{base.question}\n\n{base.answer_prefix}")  # each its own layout
        assert ruler.prompt.endswith(f"\n{ruler.question} {ruler.answer_prefix}")


def test_a_family_without_a_template_parameter_is_expanded_once() -> None:
    recipes = _recipes(_suite([{"family": "niah"}, {"family": "recall", "params": {"kind": "hex"}}]))
    recall = [r for r in recipes if r.family == "recall"]
    niah = [r for r in recipes if r.family == "niah"]
    assert len(recall) == 2 * 2 * 3 and "template" not in recall[0].params
    assert len({r.sample_id() for r in recall}) == len(recall)
    assert len(niah) == 2 * len(recall)
    assert sorted({r.params["template"] for r in niah}) == list(LAYOUTS)


def test_without_templates_a_niah_task_runs_once_with_its_own_template() -> None:
    suite = _suite([{"family": "niah", "params": {"template": "ruler"}}]).model_copy(update={"templates": None})
    recipes = _recipes(suite)
    assert len(recipes) == 2 * 2 * 3 and {r.params["template"] for r in recipes} == {"ruler"}


@pytest.mark.parametrize("context_tokens", [1024, 4096])
def test_ruler_length_convention_leaves_the_generated_tokens_out(context_tokens: int) -> None:
    builder = builder_for(token_counter("estimate"))

    def planned(convention: str) -> int:
        recipe = builder.recipe(
            family="niah",
            params={"template": "ruler", "length_convention": convention},
            haystack="prose",
            context_tokens=context_tokens,
            depth=50.0,
            seed=1,
        )
        return builder.build(recipe).planned_tokens

    prompt, ruler = planned("prompt"), planned("ruler")
    assert context_tokens - tolerance(context_tokens) <= prompt <= context_tokens
    target = context_tokens - RULER_GENERATION_TOKENS
    assert target - tolerance(target) <= ruler <= target
