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
        ("estimate", "niah", "prose"): "393cc1915089788464e868b752a120b2",
        ("estimate", "niah", "code"): "b8b1f49ee4ac8d91cc9d5ba0f14469cb",
        ("estimate", "niah", "legal"): "effdab675a18726026af355c8940894c",
        ("estimate", "niah", "noise"): "51706c68ae2f52ecaa9ec2da89e1775c",
        ("estimate", "recall", "prose"): "a7a7d5b259073255e3a617cfa7f8c37a",
        ("estimate", "recall", "code"): "34234344aa09e35ec73b9d29b5ebd6a7",
        ("estimate", "recall", "legal"): "ed6b467cdef2a3469e52456dcb2c67bb",
        ("estimate", "recall", "noise"): "3b57bf44ad8b156908674d1a0c2b826e",
        ("estimate", "multihop", "prose"): "0a3b1b00549dcac532daacd71afcdb9a",
        ("estimate", "multihop", "code"): "17103d224ad8d578a2d6e9e655cfe92b",
        ("estimate", "multihop", "legal"): "cdbdb4e4cb7236ace460f5e6a1ac0746",
        ("estimate", "multihop", "noise"): "208df7d9c41f0e7f964549a39e0588d1",
        ("local:gemma3-270m", "niah", "prose"): "26a8e6ddf2000b931ee5eb6a24b6a950",
        ("local:gemma3-270m", "niah", "code"): "02cd3705e7fb1c950a2681321acbf4bd",
        ("local:gemma3-270m", "niah", "legal"): "c81f9e5ee1490c5baf9062bd6fcceb40",
        ("local:gemma3-270m", "niah", "noise"): "5c485988cbc5741208b916f3f50eabab",
        ("local:gemma3-270m", "recall", "prose"): "c53823c557907c88531939630508d764",
        ("local:gemma3-270m", "recall", "code"): "b37d4f31f2660a3fb41eb82c9c702a95",
        ("local:gemma3-270m", "recall", "legal"): "f15f8dd28d543754b8a96f4e9dd3227b",
        ("local:gemma3-270m", "recall", "noise"): "3d547683e6dea74ff5f0667b988c330e",
        ("local:gemma3-270m", "multihop", "prose"): "374a65d95f087fd647e8b069ad23939f",
        ("local:gemma3-270m", "multihop", "code"): "2e245910a1776f894bb20153738c0300",
        ("local:gemma3-270m", "multihop", "legal"): "6125195276dbabfb9a6d793149b2bc79",
        ("local:gemma3-270m", "multihop", "noise"): "5f73ef4fda02a2efd92c86dc4d268484",
        ("estimate", "aggregate", "prose"): "a7d425868129bfc2ddfe77d997e82605",
        ("local:gemma3-270m", "aggregate", "prose"): "72763c438ee32378aff0efd57a925211",
        # mrcr 2: the gap a whole filler turn would overrun is filled inside the conversation (a cut answer).
        ("estimate", "mrcr", "prose"): "520daffd0b91fa0775d1c1e84589f43f",
        ("local:gemma3-270m", "mrcr", "prose"): "3e68662a5caf02a2e534658f03db4349",
    },
    # niah 3: RULER's layout opens the context on the line after the instruction on every haystack (prose
    # and noise prompts in `template: ruler` changed); the version seeds the needles, so every prompt differs.
    "3": {
        ("estimate", "niah", "prose"): "53828f95f0b335f2b31aa053db63930f",
        ("estimate", "niah", "code"): "85e67cd7e5757bf8110429b155e4776b",
        ("estimate", "niah", "legal"): "b650ba8f6d94c6105a8e07479215fee5",
        ("estimate", "niah", "noise"): "a6ef7022dd775a3b0ea526d1f4676a22",
        ("estimate", "niah", "needle"): "bc81dc73379f67f408b76ad5d5781614",
        ("local:gemma3-270m", "niah", "prose"): "cb5ec85158fbb172cd877f2655688650",
        ("local:gemma3-270m", "niah", "code"): "ce775a7f74eda6a848b0f70f904311c4",
        ("local:gemma3-270m", "niah", "legal"): "ae0ebaa566e81cdd9d5aa4f931518e30",
        ("local:gemma3-270m", "niah", "noise"): "08794a947b9a42d64b184bdc619b133d",
        ("local:gemma3-270m", "niah", "needle"): "e500955b5da29d2d3bb12c51d4bee0a7",
    },
    # capacity 1: the family's first prompts (16 facts, one asked).
    "1": {
        ("estimate", "capacity", "prose"): "841664d2a5f6c485a16cb4944a896014",
        ("estimate", "capacity", "code"): "3f58a334c05322e7841b37cc1378839d",
        ("estimate", "capacity", "legal"): "4d0a918388e305ec0f8a008ef5c71c9e",
        ("estimate", "capacity", "noise"): "fc2e2fa4fb4b7006a63139a29b94ca41",
        ("local:gemma3-270m", "capacity", "prose"): "0f89e7d25a93a46f35a89e3d7edbd438",
        ("local:gemma3-270m", "capacity", "code"): "c625675a48c7d123bcd80810a530af79",
        ("local:gemma3-270m", "capacity", "legal"): "33e28b2812049019a19f9a933a1095e8",
        ("local:gemma3-270m", "capacity", "noise"): "76e3568e902a93afed748817f07ee542",
        # latent 1: the family's first prompts (one hop, the default direction, the latent cue).
        ("estimate", "latent", "prose"): "ed8c9b3b39fe2a5bf7199a837206ae63",
        ("estimate", "latent", "code"): "1a72073c5e571d63b1a3c8f5501c00cb",
        ("estimate", "latent", "legal"): "30a845fda0f2618f1c8749818991fcd2",
        ("estimate", "latent", "noise"): "d773a1611300256d492ebcdfbaf58b6d",
        ("local:gemma3-270m", "latent", "prose"): "93edc9d75d0606dc13a29ef236a184ea",
        ("local:gemma3-270m", "latent", "code"): "c905bed2bf72a58816f1d59fedbbb71b",
        ("local:gemma3-270m", "latent", "legal"): "01e39c869a53803e4e114ab4b25cfb3d",
        ("local:gemma3-270m", "latent", "noise"): "f2f5c711605a5fd2bac4d26e31c56195",
        # graphwalk 1: the family's first prompts (BFS at depth 2; the whole context is the graph's edges).
        ("estimate", "graphwalk", "prose"): "c23797f452435131c198027230c5c916",
        ("local:gemma3-270m", "graphwalk", "prose"): "dab701fe9f6503725de6cbd14dca8013",
        # mrcr 1: the family's first prompts (two needles, a completions transcript).
        ("estimate", "mrcr", "prose"): "623f4b853e08c6f3a777636c29c62211",
        ("local:gemma3-270m", "mrcr", "prose"): "8f85e92d175014b7ad757e91fdf940b4",
    },
}
# niah in RULER's layout (template: ruler, length_convention: ruler), by family version
RULER_LAYOUT: dict[str, dict[tuple[str, str, str], str]] = {
    "3": {
        ("estimate", "niah", "prose"): "1c2b32bd2a6407aa79ad9b1df7497da4",
        ("estimate", "niah", "noise"): "fec311745e04bcbb0b5f1d0a041cd310",
        ("estimate", "niah", "noise:ruler"): "356fc776eee95157642d3bf7066876d9",
        ("estimate", "niah", "needle"): "6db081967ccd39cd792ccd6806898a40",
        ("local:gemma3-270m", "niah", "prose"): "9ed4479eb62733efc166a030877664f4",
        ("local:gemma3-270m", "niah", "noise"): "c8d5982df9178565a29d9a744e08fc55",
        ("local:gemma3-270m", "niah", "noise:ruler"): "60902dd3927066e090288ae9460cc2a4",
        ("local:gemma3-270m", "niah", "needle"): "b8ce31b5637e80a0282bf56449a2c195",
    },
}


@pytest.mark.parametrize("key", sorted(RULER_LAYOUT["3"]))
def test_rulers_layout_is_pinned_for_each_family_version(key: tuple[str, str, str]) -> None:
    counter, family, haystack = key
    pinned = RULER_LAYOUT.get(family_version(family), {})
    assert key in pinned, f"{family}'s generator version {family_version(family)} has no RULER-layout prompts"
    builder = builder_for(token_counter(counter))
    recipe = builder.recipe(
        family=family,
        params={"template": "ruler", "length_convention": "ruler"},
        haystack=haystack,
        context_tokens=2048,
        depth=40.0,
        seed=7,
    )
    assert builder.build(recipe).prompt_sha256[:32] == pinned[key]


@pytest.mark.parametrize("key", sorted({key for rows in GOLDEN.values() for key in rows}))
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
        f"if the change is meant, bump {family}'s version in its @task_family(...) and pin the new prompts"
    )


# The question before the document (`start`) and on both sides (`both`), on prose:
# (position, counter, family, family version) -> the prompt's sha256 (first 32 hex digits)
QUESTION_POSITIONS: dict[tuple[str, str, str, str], str] = {
    ("start", "estimate", "niah", "3"): "ee626691313736c9a86836516e21f36f",
    ("start", "estimate", "recall", "2"): "481176c2523d1804b424f289de92c99b",
    ("start", "estimate", "multihop", "2"): "b54127cd6dc8b6e6981de8f5e778369f",
    ("start", "estimate", "aggregate", "2"): "2fc607c752ab2126828238b951c76de8",
    ("start", "local:gemma3-270m", "niah", "3"): "ee1f34f50065f7b2ad98b49cde22ea68",
    ("start", "local:gemma3-270m", "recall", "2"): "fd254a034e37fb9c7c1d590b1ae6e08b",
    ("start", "local:gemma3-270m", "multihop", "2"): "51e0c670ca5f0c68b95fb2f570fe50de",
    ("start", "local:gemma3-270m", "aggregate", "2"): "c7e5a7f76a8a3f6734be874ee4db3884",
    ("both", "estimate", "niah", "3"): "28d7cc9b6f218b237e104f4f289e878a",
    ("both", "estimate", "recall", "2"): "36c7ec5bcde832e82ab09a1af49ea087",
    ("both", "estimate", "multihop", "2"): "5c5c40d5b3c0181fbc2d59c1197a14b6",
    ("both", "estimate", "aggregate", "2"): "83f3af227a624ec514d1fb548e3f9167",
    ("both", "local:gemma3-270m", "niah", "3"): "ed649ce81e43fc9f494fa7aac5a39957",
    ("both", "local:gemma3-270m", "recall", "2"): "70d7657681c02a5ff1a0712cd6ebb316",
    ("both", "local:gemma3-270m", "multihop", "2"): "75c1025fe2edf06366476bfab0ffae2c",
    ("both", "local:gemma3-270m", "aggregate", "2"): "aa9a040af945e3138b3c349b1ba697ca",
}


@pytest.mark.parametrize("key", sorted(QUESTION_POSITIONS))
def test_question_positions_are_pinned(key: tuple[str, str, str, str]) -> None:
    position, counter, family, version = key
    assert family_version(family) == version, f"{family} is at version {family_version(family)}: pin its prompts"
    builder = builder_for(token_counter(counter))
    recipe = builder.recipe(
        family=family, params={"question_position": position}, haystack="prose", context_tokens=2048, depth=40.0, seed=7
    )
    assert builder.build(recipe).prompt_sha256[:32] == QUESTION_POSITIONS[key]


# Chinese tasks (`lang: zh`) on the Chinese haystack: (counter, family, family version) -> the prompt's sha256
LANG_ZH: dict[tuple[str, str, str], str] = {
    ("estimate", "niah", "3"): "a58aecc7a870e8845d8049560fe04311",
    ("estimate", "recall", "2"): "42d9b42373f6c1d6d29a2ea92f33a814",
    ("estimate", "multihop", "2"): "7e2eac783f2d8aa3584a7ffad5a9eb71",
    ("local:gemma3-270m", "niah", "3"): "b100db516f9b061cddd70a5e0bd4f04e",
    ("local:gemma3-270m", "recall", "2"): "b666fdaf6aff28b3abbc1f59ed109aea",
    ("local:gemma3-270m", "multihop", "2"): "984649fbc78184e5b2ff67d80aedff25",
}


@pytest.mark.parametrize("key", sorted(LANG_ZH))
def test_chinese_prompts_are_pinned(key: tuple[str, str, str]) -> None:
    counter, family, version = key
    assert family_version(family) == version, f"{family} is at version {family_version(family)}: pin its prompts"
    builder = builder_for(token_counter(counter))
    recipe = builder.recipe(
        family=family, params={"lang": "zh"}, haystack="prose:zh", context_tokens=2048, depth=40.0, seed=7
    )
    assert builder.build(recipe).prompt_sha256[:32] == LANG_ZH[key]


# capacity with every parameter off its default (clustered similar-key UUID facts, four asked), by family version
CAPACITY_PARAMS = {
    "facts": 40,
    "asked": 4,
    "spread": "clustered",
    "cluster": 20,
    "interference": "similar",
    "value_kind": "uuid",
}
CAPACITY_VARIANT: dict[str, dict[str, str]] = {
    "1": {"estimate": "9268ba224f108f5af69175c08a439420", "local:gemma3-270m": "ff5012bd9513ec571756422006ce24dd"},
}


@pytest.mark.parametrize("counter", sorted(CAPACITY_VARIANT["1"]))
def test_capacity_with_all_its_parameters_is_pinned(counter: str) -> None:
    pinned = CAPACITY_VARIANT.get(family_version("capacity"), {})
    assert counter in pinned, f"capacity's generator version {family_version('capacity')} has no pinned variant"
    builder = builder_for(token_counter(counter))
    recipe = builder.recipe(
        family="capacity", params=CAPACITY_PARAMS, haystack="prose", context_tokens=4096, depth=40.0, seed=7
    )
    assert builder.build(recipe).prompt_sha256[:32] == pinned[counter]
