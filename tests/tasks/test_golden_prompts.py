"""Golden prompts: the sha256 of one prompt per family x haystack, counted with the estimate and with the
packaged Gemma 3 tokenizer. Determinism is a feature: the same recipe must give the same bytes on any
machine. Each family has its own generator version (`@task_family(name, version=...)`): any change to a
family's output fails here until that family's version is bumped and its new prompts are pinned under the
new version (old versions' rows stay, as a record of what they built). Other families are left alone."""

from __future__ import annotations

import pytest

from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.registry import family_version

# family version -> (counter, family, haystack) -> the prompt's sha256 (first 32 hex digits)
GOLDEN: dict[str, dict[tuple[str, str, str], str]] = {
    "2": {
        ('estimate', 'niah', 'prose'): "393cc1915089788464e868b752a120b2",
        ('estimate', 'niah', 'code'): "b8b1f49ee4ac8d91cc9d5ba0f14469cb",
        ('estimate', 'niah', 'legal'): "effdab675a18726026af355c8940894c",
        ('estimate', 'niah', 'noise'): "51706c68ae2f52ecaa9ec2da89e1775c",
        ('estimate', 'recall', 'prose'): "a7a7d5b259073255e3a617cfa7f8c37a",
        ('estimate', 'recall', 'code'): "34234344aa09e35ec73b9d29b5ebd6a7",
        ('estimate', 'recall', 'legal'): "ed6b467cdef2a3469e52456dcb2c67bb",
        ('estimate', 'recall', 'noise'): "3b57bf44ad8b156908674d1a0c2b826e",
        ('estimate', 'multihop', 'prose'): "0a3b1b00549dcac532daacd71afcdb9a",
        ('estimate', 'multihop', 'code'): "17103d224ad8d578a2d6e9e655cfe92b",
        ('estimate', 'multihop', 'legal'): "cdbdb4e4cb7236ace460f5e6a1ac0746",
        ('estimate', 'multihop', 'noise'): "208df7d9c41f0e7f964549a39e0588d1",
        ('local:gemma3-270m', 'niah', 'prose'): "26a8e6ddf2000b931ee5eb6a24b6a950",
        ('local:gemma3-270m', 'niah', 'code'): "02cd3705e7fb1c950a2681321acbf4bd",
        ('local:gemma3-270m', 'niah', 'legal'): "c81f9e5ee1490c5baf9062bd6fcceb40",
        ('local:gemma3-270m', 'niah', 'noise'): "5c485988cbc5741208b916f3f50eabab",
        ('local:gemma3-270m', 'recall', 'prose'): "c53823c557907c88531939630508d764",
        ('local:gemma3-270m', 'recall', 'code'): "b37d4f31f2660a3fb41eb82c9c702a95",
        ('local:gemma3-270m', 'recall', 'legal'): "f15f8dd28d543754b8a96f4e9dd3227b",
        ('local:gemma3-270m', 'recall', 'noise'): "3d547683e6dea74ff5f0667b988c330e",
        ('local:gemma3-270m', 'multihop', 'prose'): "374a65d95f087fd647e8b069ad23939f",
        ('local:gemma3-270m', 'multihop', 'code'): "2e245910a1776f894bb20153738c0300",
        ('local:gemma3-270m', 'multihop', 'legal'): "6125195276dbabfb9a6d793149b2bc79",
        ('local:gemma3-270m', 'multihop', 'noise'): "5f73ef4fda02a2efd92c86dc4d268484",
    },
}


@pytest.mark.parametrize("key", sorted(GOLDEN["2"]))
def test_prompt_bytes_are_pinned_for_each_family_version(key: tuple[str, str, str]) -> None:
    counter, family, haystack = key
    version = family_version(family)
    pinned = {k: v for k, v in GOLDEN.get(version, {}).items() if k[1] == family}
    assert pinned, f"{family}'s generator version {version} has no golden prompts: pin them here"
    builder = builder_for(token_counter(counter))
    recipe = builder.recipe(family=family, haystack=haystack, context_tokens=2048, depth=40.0, seed=7)
    assert recipe.generator_version == version
    assert builder.build(recipe).prompt_sha256[:32] == pinned[key], (
        f"{family} on {haystack} ({counter}) builds other bytes than its generator version {version} did: "
        f"if the change is meant, bump {family}'s version in its @task_family(...) and pin the new prompts")
