"""A recipe's identity keys, derived here and nowhere else. One recipe (`tasks.sample.Recipe`) has
several keys because runs are compared at several grains; each is a pure function of the recipe's typed
fields, and none is ever parsed back.

- `sample_id`: the whole recipe, tokenizer identity included. Names one prompt: the sample's id in
  `samples.jsonl`, what a resumed run skips, what an lm-eval export's docs come back by.
- `task_key`: the recipe without its tokenizer. The same question at the same length and depth counted
  by two tokenizers: how `compare` pairs runs across tokenizers and how a refused resume names what
  changed.
- `needle_key`: `task_key`'s fields without the layout parameters (`LAYOUT_PARAMS`: template, length
  convention) and the question parameters (`QUESTION_PARAMS`: `absent`). The generator's seed: the needles
  and values are drawn from it, so one cell under two layouts has identical needles, and template
  sensitivity pairs on it; an absent question's prompt holds the present one's needles.
- `sharing_key`: everything but the depth and the question parameters (an absent question's context is the
  present one's). Prompts with the same key are identical up to their first
  needle (a depth sweep): the send order groups them so a prefix cache can reuse the shared text. A
  question placed before the document (`question_position` start or both) differs at every depth, so
  there its prompts share only the instruction, and the key keeps the depth.
- `chain_key`: the prompts that one prefix cache can serve one after another, as a short text (the
  `X-Session-ID` a router keys on, the cluster of the statistics): in the nested layout a whole chain (one
  task and seed over every length and depth: `sharing_key` without the length), in the independent layout
  a depth sweep (`sharing_key`).
- `condition_key`: family and parameters (`condition_of` for a suite task, before it has recipes). One task
  of a suite: the importer rebuilds a suite's tasks from imported recipes by it, and a task's own answer
  budget is found by it.
- `cell_key`: everything but the seed (and its haystack window). One cell of the grid: what a stopping
  rule (`--stop decided`) decides on.
- `family_key`: family, parameters and haystack. One row of a paired gate (`--against`), over its lengths.
- `template_pair_key`: `needle_key` and the layout parameters other than the template and the question
  position. Two samples with it in common are one question under two layouts (template sensitivity); two
  tasks that differ in their length convention are two pairs, never one overwriting the other.

A dataset the user brings is identified by its content: where a recipe's parameters hold `dataset_sha256`,
every key digests that and leaves the `dataset` path out (`identity_params`), so the same file anywhere gives
the same keys (`tasks/families/dataset_digest.py`). A recipe from before digests keeps its path in its keys.

Every key includes the recipe's `generator_version`, which is its family's own (`tasks.family_index.family_version`): a
change to one family's output changes that family's keys alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the recipe's methods call these functions (a type only: tasks.sample imports this module)
    from ctxprobe.tasks.sample import Recipe

# Parameters that change how a task is laid out, not what it asks: the needles and values are drawn
# without them, so one cell under two layouts has identical needles (template sensitivity).
LAYOUT_PARAMS = frozenset({"template", "length_convention", "question_position", "cue", "haystack_order"})

# Parameters that change only the question: the needles are drawn without them and the context is the same,
# so prompts that differ in them share everything before the question (`tasks/absent.py`).
QUESTION_PARAMS = frozenset({"absent"})

DATASET_DIGEST = "dataset_sha256"  # the parameter that identifies a dataset by content (`dataset` is its path)

__all__ = [
    "DATASET_DIGEST",
    "QUESTION_PARAMS",
    "CellKey",
    "FamilyKey",
    "cell_key",
    "chain_key",
    "condition_key",
    "condition_of",
    "family_key",
    "identity_params",
    "needle_key",
    "sample_id",
    "sharing_key",
    "task_fields",
    "task_key",
    "template_pair_key",
]

CellKey = tuple[object, ...]
FamilyKey = tuple[str, str, str]  # family, parameters (JSON), haystack


def identity_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that say what is asked: all of them, but the dataset's path where its content digest
    stands for it."""
    if params.get(DATASET_DIGEST):
        return {k: v for k, v in params.items() if k != "dataset"}
    return dict(params)


def _recipe_fields(recipe: Recipe, **dump: Any) -> dict[str, Any]:
    fields = recipe.model_dump(mode="json", **dump)
    fields["params"] = identity_params(fields["params"])
    return fields


def _digest(fields: dict[str, Any]) -> str:
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_id(recipe: Recipe) -> str:
    """A short stable id of the whole recipe, tokenizer identity included. The chat template's size is
    digested as ids have always held it, `tokenizer+chatN`, so a sample keeps its id across versions."""
    fields = _recipe_fields(recipe)
    chat = fields.pop("chat_template_tokens", None)
    if chat is not None:
        fields["tokenizer"] = f"{fields['tokenizer']}+chat{chat}"
    return _digest(fields)


def task_fields(recipe: Recipe) -> dict[str, Any]:
    """What the sample asks, without the tokenizer: the fields `task_key` and `needle_key` digest."""
    return _recipe_fields(recipe, exclude={"tokenizer", "chat_template_tokens"})


def task_key(recipe: Recipe) -> str:
    """A stable key of the recipe's task fields (the pairing key across tokenizers)."""
    return _digest(task_fields(recipe))


def needle_key(recipe: Recipe) -> str:
    """The generator's seed: the task fields without the tokenizer and without layout parameters."""
    fields = task_fields(recipe)
    fields["params"] = {k: v for k, v in fields["params"].items() if k not in LAYOUT_PARAMS | QUESTION_PARAMS}
    return _digest(fields)


def sharing_key(recipe: Recipe) -> tuple[object, ...]:
    """Recipes with the same key build prompts that are identical up to their first needle (independent
    layout), or up to the shorter one's question (nested layout: the whole chain, every length)."""
    base = (
        recipe.mode,
        recipe.tokenizer_identity,
        recipe.generator_version,
        recipe.family,
        json.dumps(
            {k: v for k, v in identity_params(recipe.params).items() if k not in QUESTION_PARAMS}, sort_keys=True
        ),
        recipe.haystack,
        recipe.window,
    )
    if recipe.nested is not None:
        grid = recipe.nested
        return (*base, recipe.seed, grid.lengths, grid.depths, *(() if grid.block is None else (grid.block,)))
    key = (*base, recipe.context_tokens, recipe.seed)
    # the question, drawn per depth, stands before the haystack: the prompts part there
    return key if recipe.params.get("question_position", "end") == "end" else (*key, recipe.depth)


def chain_key(recipe: Recipe) -> str:
    """The prefix-sharing group a recipe belongs to, as 16 hex digits (see the module's docstring)."""
    return hashlib.sha256(repr(sharing_key(recipe)).encode()).hexdigest()[:16]


def condition_of(family: str, params: Mapping[str, Any]) -> str:
    """The key of a suite task, by its family and full parameters."""
    return json.dumps([family, dict(params)], sort_keys=True, default=str)


def condition_key(recipe: Recipe) -> str:
    """The suite task a recipe belongs to: its family and parameters."""
    return condition_of(recipe.family, recipe.params)


def cell_key(recipe: Recipe) -> CellKey:
    """A cell: everything that names a sample except its seed (and the seed's haystack window)."""
    key = (
        recipe.family,
        json.dumps(identity_params(recipe.params), sort_keys=True),
        recipe.haystack,
        recipe.context_tokens,
        float(recipe.depth),
        recipe.mode,
        recipe.tokenizer_identity,
        recipe.generator_version,
    )
    return key if recipe.nested is None else (*key, "nested")


def family_key(recipe: Recipe) -> FamilyKey:
    """A paired gate's row: the family with its parameters and haystack, over every length."""
    return (recipe.family, json.dumps(identity_params(recipe.params), sort_keys=True), recipe.haystack)


def template_pair_key(recipe: Recipe) -> tuple[str, str]:
    """The needles' key and every layout parameter but the template and the question position (and the
    question parameters: an absent question is another question, not another layout of the same one)."""
    layout = {
        k: v
        for k, v in recipe.params.items()
        if k in (LAYOUT_PARAMS - {"template", "question_position"}) | QUESTION_PARAMS
    }
    return needle_key(recipe), repr(sorted(layout.items()))
