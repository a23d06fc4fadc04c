"""The nested layout: one haystack stream per (task, seed), every length its first tokens.

In the independent layout every (length, depth, seed) cell is a prompt of its own, so a prefix cache can
share only the text before a depth sweep's shallowest needle. In the nested layout a chain (one task and seed)
has one haystack stream holding a needle for every (length, depth) cell of its grid, each at its depth of its
own length; the prompt of length L is the instructions, the stream's first tokens (with every needle that falls
inside them) and one cell's question. One prefill of the longest context then serves every shorter length, and
every depth of a length is the same context with another question: the chain's requests, sent in ascending
length on one lane, compute each context token once, plus the questions.

Each prompt lands within the exact-length tolerance of the independent layout: the stream is cut at the last
unit that fits the length's budget (the same for every depth of the length, so its questions share the whole
context), and the gap left is filled with later units that fit (`fill`), after the shared part."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.registry import get_family
from ctxprobe.tasks.sample import NestedGrid, Recipe, seed_window
from ctxprobe.tasks.sized import is_sized


def check_nests(family: str, params: dict[str, Any]) -> None:
    """Refuse, in one line, a task the nested layout cannot lay out."""
    if is_sized(get_family(family)):
        raise UserError(f"layout nested: family {family} sizes its whole document to each length, so no length's "
                        "prompt is the start of a longer one: give it layout independent")
    if params.get("question_position", "end") != "end":
        raise UserError(f"layout nested: {family}'s question stands at the {params['question_position']} "
                        "(question_position), before the haystack, so its prompts share no prefix: put it at the end")
    if params.get("haystack_order", "coherent") != "coherent":
        raise UserError(f"layout nested: {family}'s haystack is shuffled per prompt (haystack_order), so no length's "
                        "haystack is the start of a longer one: keep it coherent")


def nested_recipes(task: Recipe, lengths: Sequence[int], depths: Sequence[float], seeds: Sequence[int]) -> list[Recipe]:
    """The recipes of a task's chains, one chain per seed, each in the order it is sent: ascending length,
    the depths of one length back to back. `task` gives every field but the length, depth, seed and window."""
    check_nests(task.family, task.params)
    grid = NestedGrid(lengths=tuple(sorted(set(lengths))), depths=tuple(sorted(set(depths))))
    fields = task.model_dump(exclude={"context_tokens", "depth", "seed", "window", "nested"})
    return [Recipe(**fields, context_tokens=length, depth=depth, seed=seed,
                   window=seed_window(seed, grid.lengths[-1]), nested=grid)
            for seed in seeds for length in grid.lengths for depth in depths]


def build_nested(builder: Any, recipe: Recipe, lead: int) -> Any:
    raise NotImplementedError("the nested builder lands in the next commit")
