"""A recipe's identity keys, derived here and nowhere else. One recipe (`tasks.sample.Recipe`) has
several keys because runs are compared at several grains; each is a pure function of the recipe's typed
fields, and none is ever parsed back.

- `sample_id`: the whole recipe, tokenizer identity included. Names one prompt: the sample's id in
  `samples.jsonl`, what a resumed run skips, what an lm-eval export's docs come back by.
- `task_key`: the recipe without its tokenizer. The same question at the same length and depth counted
  by two tokenizers: how `compare` pairs runs across tokenizers and how a refused resume names what
  changed.
- `needle_key`: `task_key`'s fields without the layout parameters (`LAYOUT_PARAMS`: template, length
  convention). The generator's seed: the needles and values are drawn from it, so one cell under two
  layouts has identical needles, and template sensitivity pairs on it.
- `sharing_key`: everything but the depth. Prompts with the same key are identical up to their first
  needle (a depth sweep): the send order groups them so a prefix cache can reuse the shared text. A
  question placed before the document (`question_position` start or both) differs at every depth, so
  there its prompts share only the instruction, and the key keeps the depth.
- `condition_key`: family and parameters. One task of a suite: the importer rebuilds a suite's tasks
  from imported recipes by it.

Every key includes the recipe's `generator_version`, which is its family's own (`tasks.registry.family_version`): a
change to one family's output changes that family's keys alone.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ctxprobe.tasks.registry import LAYOUT_PARAMS

if TYPE_CHECKING:  # the recipe's methods call these functions
    from ctxprobe.tasks.sample import Recipe

__all__ = ["condition_key", "needle_key", "sample_id", "sharing_key", "task_fields", "task_key"]


def _digest(fields: dict[str, Any]) -> str:
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_id(recipe: Recipe) -> str:
    """A short stable id of the whole recipe, tokenizer identity included."""
    return _digest(recipe.model_dump(mode="json"))


def task_fields(recipe: Recipe) -> dict[str, Any]:
    """What the sample asks, without the tokenizer: the fields `task_key` and `needle_key` digest."""
    return recipe.model_dump(mode="json", exclude={"tokenizer"})


def task_key(recipe: Recipe) -> str:
    """A stable key of the recipe's task fields (the pairing key across tokenizers)."""
    return _digest(task_fields(recipe))


def needle_key(recipe: Recipe) -> str:
    """The generator's seed: the task fields without the tokenizer and without layout parameters."""
    fields = task_fields(recipe)
    fields["params"] = {k: v for k, v in fields["params"].items() if k not in LAYOUT_PARAMS}
    return _digest(fields)


def sharing_key(recipe: Recipe) -> tuple[object, ...]:
    """Recipes with the same key build prompts that are identical up to their first needle."""
    key = (recipe.mode, recipe.tokenizer, recipe.generator_version, recipe.family,
           json.dumps(recipe.params, sort_keys=True), recipe.haystack, recipe.window, recipe.context_tokens,
           recipe.seed)
    # the question, drawn per depth, stands before the haystack: the prompts part there
    return key if recipe.params.get("question_position", "end") == "end" else (*key, recipe.depth)


def condition_key(recipe: Recipe) -> str:
    """The suite task a recipe belongs to: its family and parameters."""
    return json.dumps([recipe.family, recipe.params], sort_keys=True)
