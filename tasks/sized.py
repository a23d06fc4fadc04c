"""Families whose whole context is the task (RULER's aggregation tasks): no haystack to fill, the family
writes the prompt for a given size (a number of words) and the builder finds the largest size that fits.

A sized family has `sized_draft(params, mode, rng, length, size)`, a Draft whose head holds the instruction
and the context, and `max_size(params, length)`. Each size is drawn from a fresh generator of the same seed, so
the chosen size rebuilds the same bytes. The prompt is counted whole (a word list is not made of units),
and its planned length is that count: at most the target, and within the builder's tolerance below it
unless the family runs out of words (RULER's word list caps `cwe` the same way).

A family whose unit of size is large (a conversation's turn: a hundred tokens) would land up to one unit short;
one that has `fill_limit(params)` (the most fill units, 0 for none) fills that gap inside its text: with the
size found, a second search finds the largest `fill` (`sized_draft_at(..., depth, fill=n)`, a partial unit of
`n` words) that still fits, so the prompt lands within the tolerance (`tasks/assemble.py: tolerance`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol, TypeGuard, runtime_checkable

from pydantic import BaseModel

from ctxprobe.tasks.assemble import Assembled
from ctxprobe.tasks.chat_turns import conversation_spots, messages_tokens
from ctxprobe.tasks.common_params import QuestionPosition
from ctxprobe.tasks.errors import TooShort
from ctxprobe.tasks.placement import place_question
from ctxprobe.tasks.registry import Draft
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.token_counter import TokenCounter


@runtime_checkable
class SizedFamily(Protocol):
    def sized_draft(self, params: BaseModel, mode: Mode, rng: random.Random, length: int, size: int) -> Draft: ...

    def max_size(self, params: BaseModel, length: int) -> int: ...


class Sized:
    """The base of a sized family: it writes whole prompts (`sized_draft`), never a draft for a haystack."""

    name: str

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        raise NotImplementedError(f"{self.name} is a sized family: the builder calls sized_draft")


def is_sized(family: object) -> TypeGuard[SizedFamily]:
    return isinstance(family, SizedFamily)


def compose(
    family: SizedFamily,
    params: BaseModel,
    mode: Mode,
    seed: bytes,
    length: int,
    counter: TokenCounter,
    lead: int,
    position: QuestionPosition = "end",
    depth: float = 50.0,
) -> tuple[Draft, Assembled]:
    """The largest size whose prompt fits `length` less the draft's reserved tokens, found by doubling then
    bisection on the prompt's token count; the question at `position`. A family that places needles by depth
    has `sized_draft_at(..., depth)`; a conversation's chat messages are counted by `tasks.chat_turns`."""
    draw_at = getattr(family, "sized_draft_at", None)
    fill_limit = getattr(family, "fill_limit", None)

    def at(size: int, fill: int = 0) -> tuple[Draft, int]:
        extra = {"fill": fill} if fill else {}
        drafted = (
            draw_at(params, mode, random.Random(seed), length, size, depth, **extra)
            if callable(draw_at)
            else family.sized_draft(params, mode, random.Random(seed), length, size)
        )
        draft = place_question(drafted, position)
        if draft.messages:
            return draft, messages_tokens(draft.messages, counter, lead)
        return draft, lead + counter.count_many([draft.head + draft.tail])[0]

    cap = family.max_size(params, length)
    best = at(1)
    if best[1] > length - best[0].reserve_tokens:
        raise TooShort(f"length {length} is too small for this task: its smallest prompt takes {best[1]} tokens")
    low, high = 1, None
    size = 64
    while high is None:  # doubling: `low` fits, find a size that does not
        size = min(size, cap)
        draft, tokens = at(size)
        if tokens <= length - draft.reserve_tokens:
            low, best = size, (draft, tokens)
            if size == cap:
                high = cap + 1
            size *= 2
        else:
            high = size
    while high - low > 1:
        mid = (low + high) // 2
        draft, tokens = at(mid)
        if tokens <= length - draft.reserve_tokens:
            low, best = mid, (draft, tokens)
        else:
            high = mid
    if callable(fill_limit) and callable(draw_at):
        best = _filled(at, low, fill_limit(params), length, best)
    draft, tokens = best
    return draft, Assembled(
        prompt=draft.head + draft.tail, planned_tokens=tokens, needles=conversation_spots(draft, counter, lead)
    )


def _filled(
    at: Callable[[int, int], tuple[Draft, int]], size: int, limit: int, length: int, best: tuple[Draft, int]
) -> tuple[Draft, int]:
    """The draft of `size` with the largest fill up to `limit` that still fits (bisection: a longer fill is
    never shorter in tokens); `best` (no fill) when none fits."""
    low, high = 0, limit + 1
    while high - low > 1:
        mid = (low + high) // 2
        draft, tokens = at(size, mid)
        if tokens <= length - draft.reserve_tokens:
            low, best = mid, (draft, tokens)
        else:
            high = mid
    return best
