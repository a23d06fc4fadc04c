"""Absent questions in the nested layout (`tasks/absent.py`): each asks for a key of its chain that its length's
prompt does not reach, so its context is one the chain's present questions have already had computed.

Per length, the depths take their turns (grid order) among the chain's cells whose asked keys no needle inside
the length's cut names (a longer length's needles past it), then among the chain's spares: draws placed
nowhere, apart from every cell, from each other and from the chain's haystack (the longest length reaches
every needle, so it asks spares only). A question is taken only where its tail is no longer in tokens than
the longest present tail of the length, which the length's budget was laid out for: an absent prompt never
runs past its length. Each depth of a length asks another key."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctxprobe.tasks.absent import absent_draft, asked_keys
from ctxprobe.tasks.draft import Draft
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.nested import MAX_ATTEMPTS, ChainBuilder, ChainLayout, build_nested, chain_seed, draw, haystack_fits
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Recipe, Sample

Asked = tuple[Draft, int]  # the draw whose question is asked, and its tail's tokens


@dataclass(frozen=True)
class AbsentQuestions:
    """One chain's absent questions: per length, the draws its depths ask in turn."""

    by_length: dict[int, tuple[Asked, ...]]


def build_nested_absent(builder: ChainBuilder, recipe: Recipe, lead: int) -> Sample:
    """The absent recipe's sample: its cell's prompt, asking another key's question."""
    return build_nested(builder, recipe, lead, lambda layout: absent_question(builder, recipe, lead, layout))


def absent_question(builder: ChainBuilder, recipe: Recipe, lead: int, layout: ChainLayout) -> Asked:
    """The absent recipe's draft (its cell's needles, all distractors, and another key's question) and its
    tail's tokens."""
    grid = recipe.nested
    assert grid is not None
    questions = builder.chain_layout(recipe, lead, lambda b, r, _: _questions(b, r, layout), part="absent")
    asking, tokens = questions.by_length[recipe.context_tokens][list(grid.depths).index(float(recipe.depth))]
    return absent_draft(layout.drafts[(recipe.context_tokens, float(recipe.depth))], asking), tokens


def _questions(builder: ChainBuilder, recipe: Recipe, layout: ChainLayout) -> AbsentQuestions:
    grid = recipe.nested
    assert grid is not None
    room = {
        length: max(t for (cell_length, _), t in layout.tails.items() if cell_length == length)
        for length in grid.lengths
    }
    spares = _spares(builder, recipe, layout, min(room.values()))
    by_length = {}
    for length in grid.lengths:
        inside = [n.text for n in layout.needles if n.slot <= layout.cuts[length]]
        unreached = [
            (draft, layout.tails[cell])
            for cell, draft in layout.drafts.items()
            if cell[0] > length
            and layout.tails[cell] <= room[length]
            and not any(key in text for key in asked_keys(draft) for text in inside)
        ]
        by_length[length] = tuple([*unreached, *spares][: len(grid.depths)])
    return AbsentQuestions(by_length)


def _spares(builder: ChainBuilder, recipe: Recipe, layout: ChainLayout, room: int) -> list[Asked]:
    """As many draws as the grid has depths, placed nowhere: each apart from every cell, every earlier spare and
    the chain's haystack, with a tail of at most `room` tokens."""
    grid = recipe.nested
    assert grid is not None
    family = get_family(recipe.family)
    params = validate_params(family, recipe.params)
    fits: Callable[[set[str]], bool] = haystack_fits(builder, recipe)
    count = builder.unit_counts(recipe.haystack).count_texts
    taken = {text for draft in layout.drafts.values() for text in (*draft.unique, *(n.answer for n in draft.needles))}
    spares: list[Asked] = []
    for index in range(len(grid.depths)):
        for attempt in range(MAX_ATTEMPTS):
            spare = draw(
                family,
                params,
                recipe,
                (grid.lengths[-1], grid.depths[0]),
                taken,
                f"{chain_seed(recipe)}#absent#{index}#{attempt}",
            )
            own = {*spare.unique, *(n.answer for n in spare.needles)}
            if own.isdisjoint(taken) and fits(own) and (tokens := count([spare.tail])[0]) <= room:
                break
        else:
            raise UserError(
                f"could not draw an absent question of {recipe.family} apart from its nested chain, and "
                f"no longer than its present questions, after {MAX_ATTEMPTS} tries: give fewer depths"
            )
        spares.append((spare, tokens))
        taken |= own
    return spares
