"""The order samples are sent in. A needle at depth d makes the engine recompute everything after it, so
prompts that share a prefix (same task, haystack window, length, seed, mode and tokenizer: a depth sweep)
are sent one after another, deepest needle first: each then reuses the longest prefix already computed.
With concurrency c, c lanes each take whole sharing groups, so a group never races itself.

The order never changes a prompt or its id: it is a scheduling choice, recorded in the manifest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ctxprobe.tasks.identity import sharing_key
from ctxprobe.tasks.sample import Recipe

Order = Literal["cache-aware", "as-listed"]


def send_groups(recipes: Sequence[Recipe], order: Order) -> list[list[Recipe]]:
    """Groups a lane sends one after another. `as-listed`: one recipe a group, in the suite's order."""
    if order == "as-listed":
        return [[r] for r in recipes]
    groups: dict[tuple[object, ...], list[Recipe]] = {}
    for recipe in recipes:
        groups.setdefault(sharing_key(recipe), []).append(recipe)
    return [sorted(g, key=lambda r: -r.depth) for g in groups.values()]


def expected_cached_tokens(groups: Sequence[Sequence[Recipe]], lead_tokens: int = 0) -> tuple[int, int]:
    """(prompt tokens, of which a one-slot prefix cache per lane could serve) for sending the groups as
    listed, each group's recipes one after another. A sample reuses the previous one's tokens up to the
    shallower of the two needles (approximated by depth x length); prompts of other groups share nothing
    this model counts (instructions differ by task). It is the bound the issue's figures use."""
    total = cached = 0
    for group in groups:
        previous: Recipe | None = None
        for recipe in group:
            total += recipe.context_tokens
            if previous is not None and sharing_key(previous) == sharing_key(recipe):
                cached += lead_tokens + int(min(previous.depth, recipe.depth) / 100.0 * recipe.context_tokens)
            previous = recipe
    return total, cached
