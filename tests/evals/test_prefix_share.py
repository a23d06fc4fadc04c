"""One model of a chain's cache (`evals/run/send/prefix_share.py`) behind both the send order's bound and the
dry run's prefill: on nested grids (absent questions included, so a chain's questions differ) each gives the
numbers its own model gave before the two were made one (the two former models are written out here as they
were), and fed the same streams the two agree token for token."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

import pytest

from ctxprobe.evals.run.prefill_cost import FILL_TOKENS, lanes_of, requests, tail_counter
from ctxprobe.evals.run.send.order import QUESTION_ALLOWANCE, expected_cached_tokens, send_groups
from ctxprobe.tasks.identity import sharing_key
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import make_token_counter

COUNTER = "estimate:4"


def _grid(layout: str, absent: bool) -> list[Recipe]:
    tasks = [{"family": "niah"}, {"family": "recall"}]
    if absent:
        tasks.append({"family": "niah", "params": {"absent": 1}})
    suite = Suite.model_validate(
        {
            "name": "s",
            "lengths": ["1k", "2k", "4k"],
            "depths": "0,50,100",
            "samples": 2,
            "layout": layout,
            "tasks": tasks,
        }
    )
    return suite.recipes(lambda mode: COUNTER)


def _tails() -> Callable[[Recipe], int]:
    """The dry run's question tokens, an absent question's made 9 longer: a chain whose questions differ."""
    drafted = tail_counter(make_token_counter(COUNTER))
    return lambda r: drafted(r) + 9 * bool(r.params.get("absent"))


def _order_before(groups: Sequence[Sequence[Recipe]], streams: Mapping[str, float] | None) -> tuple[int, int]:
    """`order.expected_cached_tokens` as it was (no offsets, no blocks)."""

    def stream(r: Recipe) -> int:
        known = streams.get(r.sample_id()) if streams else None
        return int(known) if known is not None else max(0, r.context_tokens - QUESTION_ALLOWANCE)

    total = cached = 0
    for group in groups:
        previous = None
        for recipe in group:
            total += recipe.context_tokens
            if previous is not None and sharing_key(previous) == sharing_key(recipe):
                cached += (
                    min(stream(previous), stream(recipe))
                    if recipe.nested is not None
                    else int(min(previous.depth, recipe.depth) / 100.0 * recipe.context_tokens)
                )
            previous = recipe
    return total, cached


def _prefill_before(lanes: Sequence[Sequence[Recipe]], tail: Callable[[Recipe], int], fill: int) -> list[int]:
    """`prefill_cost.reused_tokens` as it was, request by request."""
    out = []
    for lane in lanes:
        previous = None
        for recipe in lane:
            if previous is None or sharing_key(previous) != sharing_key(recipe):
                reused = 0
            elif recipe.nested is None:
                reused = int(min(previous.depth, recipe.depth) / 100.0 * recipe.context_tokens)
            elif previous.context_tokens == recipe.context_tokens:
                reused = max(recipe.context_tokens - tail(recipe), 0)
            else:
                shorter = min(previous, recipe, key=lambda r: r.context_tokens)
                reused = max(shorter.context_tokens - fill - tail(shorter), 0)
            out.append(reused)
            previous = recipe
    return out


@pytest.mark.parametrize("layout", ["nested", "independent"])
@pytest.mark.parametrize("order", ["cache-aware", "as-listed"])
def test_the_order_and_the_dry_run_count_as_before(layout: str, order: str) -> None:
    recipes = _grid(layout, absent=layout == "nested")
    tail = _tails()
    groups = send_groups(recipes, order)  # type: ignore[arg-type]
    measured = {r.sample_id(): float(r.context_tokens - 40) for r in recipes}  # a chain's stream at each length
    for streams in (None, measured):
        assert expected_cached_tokens(groups, streams=streams) == _order_before(groups, streams)
    lanes = lanes_of(recipes, order, 3)  # type: ignore[arg-type]
    got = [r.reused for r in requests(lanes, tail)]
    assert got == _prefill_before(lanes, tail, FILL_TOKENS) and (layout == "independent" or sum(got) > 0)


def test_fed_the_same_streams_the_order_and_the_dry_run_agree() -> None:
    """With no fill, the dry run's stream is its length less its question; handed to the order's bound as
    measured streams, both count the same cached tokens for the same lanes."""
    recipes = _grid("nested", absent=True)
    random.Random(3).shuffle(recipes)
    tail = _tails()
    lanes = lanes_of(recipes, "cache-aware", 2)
    streams = {r.sample_id(): float(r.context_tokens - tail(r)) for r in recipes}
    assert sum(r.reused for r in requests(lanes, tail, fill=0)) == expected_cached_tokens(lanes, streams=streams)[1]
