"""Absent needles (tasks/absent.py): the question asks, in a present question's words, for a key the prompt
holds nowhere; the context is the present recipe's, byte for byte; the same recipe rebuilds the same bytes."""

from __future__ import annotations

import re

import pytest

from ctxprobe.tasks import identity
from ctxprobe.tasks.build import PromptBuilder, build_sample
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.nested import nested_recipes
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Recipe, Sample
from ctxprobe.tasks.suite import parse_suite
from ctxprobe.tasks.token_counter import make_token_counter

KEY = re.compile(r"\b[a-z]+-[a-z]+\b|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TASKS = [
    ("niah", {"variant": "single"}),
    ("niah", {"variant": "multikey", "distractors": 4}),
    ("niah", {"variant": "multivalue", "values": 3}),
    ("niah", {"variant": "multiquery", "queries": 3}),
    ("niah", {"variant": "single", "key_kind": "uuid", "value_kind": "uuid"}),
    ("recall", {"kind": "hex", "distractors": 2}),
]


def context(sample: Sample) -> str:
    """The prompt before its question."""
    return sample.prompt[: sample.prompt.rindex(sample.question)]


def asked(sample: Sample) -> list[str]:
    """The keys the question names (less the words of the question's own frame)."""
    return [k for k in KEY.findall(sample.question) if k not in ("special-magic",)]


def present(recipe: Recipe) -> Recipe:
    return recipe.model_copy(update={"params": {**recipe.params, "absent": False}})


@pytest.mark.parametrize(("family", "params"), TASKS)
def test_the_asked_key_is_nowhere_in_an_independent_prompt_that_holds_the_present_ones_needles(family, params):
    """The needles are the present twin's and the prompt is its prompt but for the end: the haystack is fit to the
    length around the prompt's own question, so its last units may differ."""
    for seed in range(12):
        recipe = Recipe(
            family=family, params={**params, "absent": True}, context_tokens=600, depth=10.0 * (seed % 11), seed=seed
        )
        sample, twin = build_sample(recipe), build_sample(present(recipe))
        keys = asked(sample)
        assert keys and all(k not in context(sample) for k in keys), (seed, keys)
        assert sample.question != twin.question
        assert sorted(n.text for n in sample.needles) == sorted(n.text for n in twin.needles)
        head = twin.prompt.index("\n\n") + 200  # the instructions and the haystack window's first words
        assert sample.prompt[:head] == twin.prompt[:head]
        assert abs(sample.planned_tokens - twin.planned_tokens) <= 32  # both fit to the length
        assert sample.expected.kind == "absent" and sample.expected.answers == []
        assert {n.role for n in sample.needles} == {"distractor"}


@pytest.mark.parametrize(("family", "params"), [TASKS[0], TASKS[3], TASKS[5]])
def test_a_nested_absent_question_asks_a_key_of_its_chain_that_its_length_does_not_reach(family, params):
    for seed in range(4):
        task = Recipe(family=family, params={**params, "absent": True}, context_tokens=4096)
        absent = nested_recipes(task, [1024, 2048, 4096], [0, 50, 100], [seed])
        longest = build_sample(present(absent[-1]))  # holds every needle of the chain
        chain_keys = set(KEY.findall(context(longest)))
        by_length: dict[int, list[str]] = {}
        for recipe in absent:
            sample, twin = build_sample(recipe), build_sample(present(recipe))
            keys = asked(sample)
            assert keys and all(k not in context(sample) for k in keys), (seed, recipe.context_tokens, keys)
            assert context(sample) == context(twin)  # the present chain's context: cached already
            assert sample.planned_tokens <= recipe.context_tokens and {n.role for n in sample.needles} == {"distractor"}
            assert identity.chain_key(recipe) == identity.chain_key(twin.recipe)
            by_length.setdefault(recipe.context_tokens, []).append(keys[0])
        # a shorter length asks later needles of its chain (then spares); the longest, spares placed nowhere
        assert any(k in chain_keys for k in by_length[1024]) and not any(k in chain_keys for k in by_length[4096])
        assert all(len(set(keys)) == len(keys) for keys in by_length.values())  # each depth its own key


def test_the_same_recipe_builds_the_same_bytes_in_a_fresh_builder():
    recipes = [
        Recipe(family="niah", params={"absent": True}, context_tokens=800, depth=30, seed=5),
        *nested_recipes(
            Recipe(family="niah", params={"absent": True}, context_tokens=2048), [1024, 2048], [0, 100], [2]
        ),
    ]
    for recipe in recipes:
        again = PromptBuilder(make_token_counter("estimate:4")).build(recipe)
        assert build_sample(recipe).prompt_sha256 == again.prompt_sha256


def test_keys_an_absent_recipe_shares_with_its_present_twin_and_those_it_does_not():
    recipe = Recipe(family="niah", params={"variant": "single", "absent": True}, context_tokens=2048, depth=40)
    twin = present(recipe)
    assert identity.needle_key(recipe) == identity.needle_key(twin)
    assert identity.sharing_key(recipe) == identity.sharing_key(twin)
    for key in (
        identity.sample_id,
        identity.task_key,
        identity.cell_key,
        identity.condition_key,
        identity.template_pair_key,
    ):
        assert key(recipe) != key(twin), key.__name__


def test_absent_is_left_out_of_a_recipe_at_its_default_so_every_id_stays():
    dumped = validate_params(get_family("niah"), {"variant": "single"}).model_dump(mode="json")
    assert "absent" not in dumped
    assert validate_params(get_family("niah"), {"absent": True}).model_dump(mode="json")["absent"] is True


@pytest.mark.parametrize(
    ("family", "params", "says"),
    [
        ("recall", {"kind": "code"}, "hex or uuid"),
        ("recall", {"kind": "clause"}, "hex or uuid"),
        ("niah", {"lang": "zh"}, "English only"),
    ],
)
def test_a_family_kind_with_no_value_to_invent_refuses_absent(family, params, says):
    with pytest.raises(UserError, match=says):
        validate_params(get_family(family), {**params, "absent": True})


def test_families_without_values_of_a_kind_have_no_absent_parameter():
    for family in ("multihop", "latent", "aggregate", "qa", "graphwalk"):
        assert "absent" not in get_family(family).Params.model_fields, family


def test_an_absent_task_of_a_suite_rides_its_present_twins_chains_at_the_depths_it_asks():
    suite = parse_suite(
        {
            "name": "t",
            "lengths": "1k,2k,4k",
            "depths": "0:100:25",
            "samples": 2,
            "layout": "nested",
            "tasks": [
                {"family": "niah", "params": {"variant": "single"}},
                {"family": "niah", "params": {"variant": "single", "absent": True}, "depths": [50]},
            ],
        },
        "bad suite",
    )
    recipes = suite.recipes(lambda mode: "estimate:4")
    absent = [r for r in recipes if r.params.get("absent")]
    assert suite.size() == len(recipes) == 30 + 6 and len(absent) == 6  # one per chain and length
    chains = {identity.chain_key(r) for r in recipes if not r.params.get("absent")}
    assert {identity.chain_key(r) for r in absent} == chains
    for recipe in absent:
        sample = build_sample(recipe)
        assert all(k not in context(sample) for k in asked(sample))


def test_an_absent_task_asking_a_depth_its_twins_chains_do_not_hold_is_refused():
    suite = parse_suite(
        {
            "name": "t",
            "lengths": "1k,2k",
            "depths": "0,100",
            "layout": "nested",
            "tasks": [{"family": "niah", "params": {}}, {"family": "niah", "params": {"absent": True}, "depths": [50]}],
        },
        "bad suite",
    )
    with pytest.raises(UserError, match="do not hold"):
        suite.recipes(lambda mode: "estimate:4")
