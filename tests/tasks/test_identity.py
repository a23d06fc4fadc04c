"""A recipe's keys (tasks/identity.py) and its per-family generator version: every id stays what it was,
each key is what its docstring says it is, and bumping one family's version leaves the others alone."""

from __future__ import annotations

import hashlib
import json

import pytest

from ctxprobe.evals.run.send.order import send_groups
from ctxprobe.tasks import identity
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.registry import BASE_VERSION, family_version, get_family
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import load_suite

# Ids of recipes by family version; version "2" is the single global version before versions were per
# family: they must not move while a family stays at its version.
PINNED_IDS = {  # family -> version -> (sample_id, task_key) of recipe(family, 2048 tokens, depth 40, seed 7), estimate
    "niah": {"2": ("0efee77263f1b985", "b0609ddb5a534548"), "3": ("37bf534c2f685f61", "7cbcb5cefce6616c")},
    "recall": {"2": ("e867a8d2704965f2", "a801a3011b5501f1")},
    "multihop": {"2": ("71c424224501a727", "0aa9c68ae4edf549")},
    "capacity": {"1": ("ab686cdd3f5caf8b", "c56a1897fa796507")},
}
# suite -> (recipes, sha256 of the comma-joined sample ids, of the task keys): niah at version 3, and the
# ruler suite with RULER's 13 tasks, the capacity suite with its facts axis
PINNED_SUITES = {
    "quick": (16, "3072bcdc054b2414", "320dd3ffbf8ca259"),  # nested since the first run had to be short
    "quick-independent": (16, "c26250c258d7d426", "32ca4c0f334d03c0"),  # the quick suite's ids before it
    "nightly": (3744, "e13354bf3e71ad51", "bcf892035fa9ce48"),  # nested since the layout study; absent needles added
    "nightly-independent": (3744, "4a0557bc9fd7e48b", "11864dfa316e1e5e"),  # the nightly's ids before it; absent
    "ruler": (3120, "c34a6be8f63d7e28", "7d736146d44fadf5"),
    "capacity": (1280, "89546df5bcad87a3", "69731ef9844cf357"),
}


def _builder():  # type: ignore[no-untyped-def]
    return builder_for(token_counter("estimate"))


def _joined(keys: list[str]) -> str:
    return hashlib.sha256(",".join(keys).encode()).hexdigest()[:16]


def _by_hand(fields: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


@pytest.mark.parametrize("family", sorted(PINNED_IDS))
def test_ids_are_those_pinned_for_the_familys_version(family: str) -> None:
    recipe = _builder().recipe(family=family, context_tokens=2048, depth=40.0, seed=7)
    version = family_version(family)
    assert recipe.generator_version == version
    assert (recipe.sample_id(), recipe.task_key()) == PINNED_IDS[family][version]


@pytest.mark.parametrize("suite", sorted(PINNED_SUITES))
def test_builtin_suites_keep_every_id(suite: str) -> None:
    recipes = load_suite(suite).recipes(_builder().recipe_tokenizer)
    assert (
        len(recipes),
        _joined([r.sample_id() for r in recipes]),
        _joined([r.task_key() for r in recipes]),
    ) == PINNED_SUITES[suite]


@pytest.mark.parametrize(
    ("suite", "pinned"),
    [
        ("nightly", ("b3b45558002f75cd", "3d0dba40b8e8f9ff")),
        ("nightly-independent", ("17d79a66c328d1ca", "52a717e7a83e2363")),
    ],
)
def test_the_nightlys_absent_needles_left_every_earlier_id_as_it_was(suite: str, pinned: tuple[str, str]) -> None:
    """The absent task came after the nightly's ids were pinned: without it, the nightly is what it was."""
    recipes = load_suite(suite).recipes(_builder().recipe_tokenizer)
    present = [r for r in recipes if not r.params.get("absent")]
    assert (len(present), _joined([r.sample_id() for r in present]), _joined([r.task_key() for r in present])) == (
        3696,
        *pinned,
    )


@pytest.mark.parametrize(
    ("suite", "pinned"),
    [
        ("nightly-independent", (1848, "82a508337a7c6e34", "9e6f8da9f442afdb")),
        ("nightly", (1848, "79968d6fc41233b1", "af99ffb7db09d33e")),
    ],
)
def test_the_nightly_at_8_seeds_keeps_the_ids_of_its_4_seeds(suite: str, pinned: tuple[int, str, str]) -> None:
    """The nightly went from 4 seeds per cell to 8: its first 4 seeds are the samples it held before, id for
    id, so runs of the 4-seed nightly pair with it (in either layout: a nested chain is one seed)."""
    nightly = load_suite(suite)
    before = [
        r
        for r in nightly.model_copy(update={"samples": 4}).recipes(_builder().recipe_tokenizer)
        if not r.params.get("absent")
    ]  # the absent needles came after
    assert (len(before), _joined([r.sample_id() for r in before]), _joined([r.task_key() for r in before])) == pinned
    assert {r.sample_id() for r in before} <= {r.sample_id() for r in nightly.recipes(_builder().recipe_tokenizer)}


def test_each_key_digests_the_fields_it_documents() -> None:
    recipe = Recipe(
        family="niah",
        params={"variant": "single", "template": "ruler"},
        context_tokens=4096,
        depth=10.0,
        seed=3,
        mode="chat",
        tokenizer="hf:abc",
    )
    whole = recipe.model_dump(mode="json")
    assert identity.sample_id(recipe) == recipe.sample_id() == _by_hand(whole)
    asked = {k: v for k, v in whole.items() if k != "tokenizer"}
    assert identity.task_key(recipe) == recipe.task_key() == _by_hand(asked)
    assert identity.needle_key(recipe) == _by_hand({**asked, "params": {"variant": "single"}})
    assert identity.condition_key(recipe) == json.dumps(["niah", recipe.params], sort_keys=True)


def test_keys_ignore_what_they_document_ignoring() -> None:
    base = Recipe(family="niah", params={"template": "ctxprobe"}, context_tokens=4096, depth=10.0, seed=3)
    other_tokenizer = base.model_copy(update={"tokenizer": "hf:other"})
    other_layout = base.model_copy(update={"params": {"template": "ruler"}})
    deeper = base.model_copy(update={"depth": 90.0})
    assert base.task_key() == other_tokenizer.task_key() and base.sample_id() != other_tokenizer.sample_id()
    assert identity.needle_key(base) == identity.needle_key(other_layout) and base.task_key() != other_layout.task_key()
    assert identity.sharing_key(base) == identity.sharing_key(deeper) and base.task_key() != deeper.task_key()
    assert identity.sharing_key(base) != identity.sharing_key(base.model_copy(update={"seed": 4}))


def test_a_recipe_names_its_familys_version_and_an_older_record_keeps_its_own() -> None:
    assert Recipe(family="niah", context_tokens=1024).generator_version == family_version("niah")
    assert Recipe(family="not-registered", context_tokens=1024).generator_version == BASE_VERSION
    old = Recipe.model_validate({"family": "niah", "context_tokens": 1024, "generator_version": "1"})
    assert old.generator_version == "1"
    assert Recipe.model_validate_json(old.model_dump_json()).sample_id() == old.sample_id()


def test_bumping_recall_leaves_niah_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    builder = _builder()
    suite = load_suite("quick")

    def built() -> dict[str, list[tuple[str, str, str]]]:
        out: dict[str, list[tuple[str, str, str]]] = {}
        for recipe in suite.recipes(builder.recipe_tokenizer):
            out.setdefault(recipe.family, []).append(
                (recipe.sample_id(), identity.needle_key(recipe), builder.build(recipe).prompt_sha256)
            )
        return out

    before = built()
    assert {"niah", "recall"} <= set(before)
    monkeypatch.setattr(type(get_family("recall")), "version", "3")
    assert family_version("recall") == "3" and family_version("niah") == "3"
    after = built()
    for family in before:
        if family == "recall":
            assert all(a[0] != b[0] and a[1] != b[1] for a, b in zip(after[family], before[family]))
        else:
            assert after[family] == before[family], f"{family} changed when recall's version did"
    bumped = [r for r in suite.recipes(builder.recipe_tokenizer) if r.family == "recall"]
    assert {r.generator_version for r in bumped} == {"3"}


def test_a_bumped_family_is_sent_apart_from_its_old_version() -> None:
    recipe = Recipe(family="recall", context_tokens=2048, depth=10.0)
    bumped = recipe.model_copy(update={"generator_version": "3", "depth": 90.0})
    assert len(send_groups([recipe, bumped], "cache-aware")) == 2


def test_the_chat_template_size_is_a_typed_field_and_old_records_keep_their_ids() -> None:
    """Records written before the typed field named the template's size in the tokenizer (`tok+chatN`):
    they load with the size typed, and their sample id (and so resume, compare, history) is unchanged."""
    import hashlib
    import json

    old = {
        "family": "niah",
        "params": {},
        "haystack": "prose",
        "context_tokens": 1024,
        "depth": 50.0,
        "seed": 0,
        "window": 0,
        "mode": "chat",
        "tokenizer": "hf-abc123+chat23",
        "generator_version": "2",
    }
    then = hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    recipe = Recipe.model_validate(old)
    assert (recipe.tokenizer, recipe.chat_template_tokens) == ("hf-abc123", 23)
    assert recipe.sample_id() == then
    written = recipe.model_dump(mode="json")
    assert written["tokenizer"] == "hf-abc123" and written["chat_template_tokens"] == 23
    assert Recipe.model_validate(written) == recipe
    plain = Recipe.model_validate({**old, "tokenizer": "hf-abc123", "mode": "completions"})
    assert "chat_template_tokens" not in plain.model_dump()  # a recipe without one writes what it always did
    assert plain.task_key() == recipe.model_copy(update={"mode": "completions"}).task_key()
