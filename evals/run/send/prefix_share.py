"""The tokens of a prompt that a one-slot prefix cache holding the previous prompt of its lane serves: one model
of that share, which the send order's bound (`order.expected_cached_tokens`, also the run's reuse figures) and
the dry run's prefill (`run/prefill_cost.py`) both count with, so the two cannot tell a chain's cache apart.

- Two prompts of other sharing groups (`sharing_key`) share nothing the model counts (instructions differ).
- Independent prompts of one depth sweep share their text up to the shallower needle: where built prompts give
  their first needle's token offset, up to the smaller offset; else the lead before the haystack and the
  shallower depth's share of the length.
- A nested chain's prompt is its stream (the haystack through its length's cut, the start of every longer prompt
  of the chain), its length's fill (shared by that length's prompts) and its question (its own). Two prompts of
  one length share the stream and the fill; of two lengths, the shorter one's stream. What a stream holds is
  the caller's (`ChainParts.stream`): measured on a built sample, or estimated from its length and question."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ctxprobe.tasks.identity import sharing_key
from ctxprobe.tasks.sample import Recipe


@dataclass(frozen=True)
class ChainParts:
    """How a nested chain's prompts are made, as a cache sees them: `stream(recipe)`, its prompt's tokens shared
    with every longer prompt of its chain, and `fill`, the tokens after the stream its length's prompts share."""

    stream: Callable[[Recipe], int]
    fill: int = 0

    def shared(self, previous: Recipe, recipe: Recipe) -> int:
        """Tokens of `recipe`'s prompt that `previous`'s prompt (of the same chain) holds: of one length, the
        stream and the fill (the stream counted from `recipe`); of two, the shorter prompt's stream."""
        if previous.context_tokens == recipe.context_tokens:
            return max(self.stream(recipe) + self.fill, 0)
        return max(self.stream(min(previous, recipe, key=lambda r: r.context_tokens)), 0)


def shared_tokens(
    previous: Recipe | None,
    recipe: Recipe,
    chain: ChainParts,
    lead_tokens: int = 0,
    offsets: Mapping[str, int] | None = None,
) -> int:
    """Tokens of `recipe`'s prompt a one-slot cache holding `previous`'s prompt serves (the module docstring):
    `chain` for nested prompts, `offsets` (by sample id) or the depths with `lead_tokens` for independent ones."""
    if previous is None or sharing_key(previous) != sharing_key(recipe):
        return 0
    if recipe.nested is not None:
        return chain.shared(previous, recipe)
    if offsets and previous.sample_id() in offsets and recipe.sample_id() in offsets:
        return min(offsets[previous.sample_id()], offsets[recipe.sample_id()])
    return lead_tokens + int(min(previous.depth, recipe.depth) / 100.0 * recipe.context_tokens)
