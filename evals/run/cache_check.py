"""Which requests the cache-path control sends again cold (`--cache-check`): a seeded share of the requests a
prefix cache serves, or can serve (every request of a sharing group but its first: a nested chain's or a
depth sweep's), chosen per length so that no length goes unchecked.

`--cache-check auto` (the default of a nested run, which depends on the cache for every request but a chain's
first) keeps the control's prefill within `COST_SHARE` of the run's computed prefill (`prefill_cost`), with
a floor: at least one check at every length (an engine's cache faults are often length-dependent: a block
size, a sliding window, a chunk boundary), then a second per length, then more, shortest lengths first,
until `MIN_CHECKS` in all, each only while the control stays within that share. On a suite whose longest
prompts dominate its computed prefill (the nightly: one cold 1M prompt is ~1.8 % of it) the floor alone can
pass the share; the dry run says so (its `cache_check_requests` and their share of the computed prefill). `--cache-check FRACTION` takes
that share of the servable requests at each length (at least one), whatever it costs; `off`, none (an
independent run's default). The same suite and seed choose the same checks on any machine and on resume."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ctxprobe.evals.compare.cache_path import decide
from ctxprobe.evals.records.cache_check import CacheCheck, CacheCheckRecord
from ctxprobe.evals.run.prefill_cost import lanes_of
from ctxprobe.tasks.cache_check_value import ALLOWED, AUTO, OFF, cache_check_value
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe

COST_SHARE = 0.03  # the control's prefill, at most, as a share of the run's computed prefill (past the floor)
PER_LENGTH = 2
MIN_CHECKS = 8


def parse_cache_check(value: str | None) -> str | None:
    """`--cache-check`: `auto`, `off`, or a share in (0, 1] written back as a number; bad input is one line (exit 2)."""
    try:
        return cache_check_value(value)
    except ValueError:
        raise UserError(f"--cache-check {value}: give {ALLOWED}") from None


def asked(value: str | None, recipes: Sequence[Recipe]) -> str:
    """The control asked for: as given, else auto for a run holding nested chains and off otherwise."""
    if value is not None:
        return value
    return AUTO if any(r.nested is not None for r in recipes) else OFF


def servable(recipes: Sequence[Recipe]) -> list[Recipe]:
    """The requests a prefix cache can serve: each sharing group's (a chain's, a depth sweep's) but its first."""
    return [r for group in lanes_of(recipes, "cache-aware", 1) for r in group[1:]]


def choose(recipes: Sequence[Recipe], ask: str, *, seed: int, computed_prefill: int) -> list[Recipe]:
    """The recipes to send again cold, shortest length first (see the module's docstring)."""
    if ask == OFF:
        return []
    by_length: dict[int, list[Recipe]] = {}
    for recipe in sorted(servable(recipes), key=lambda r: r.sample_id()):
        by_length.setdefault(recipe.context_tokens, []).append(recipe)
    for length, pool in by_length.items():
        random.Random(f"cache-check:{seed}:{length}").shuffle(pool)
    lengths = sorted(by_length)
    if ask != AUTO:
        share = float(ask)
        return [r for n in lengths for r in by_length[n][: max(1, round(share * len(by_length[n])))]]
    taken = {n: 1 for n in lengths}  # the floor: every length once
    cost = sum(lengths)
    budget = COST_SHARE * computed_prefill

    def add(n: int) -> bool:
        nonlocal cost
        if taken[n] < len(by_length[n]) and cost + n <= budget:
            taken[n] += 1
            cost += n
            return True
        return False

    for n in lengths:
        if taken[n] < PER_LENGTH:
            add(n)
    while sum(taken.values()) < MIN_CHECKS:  # one more per length in turn, shortest first
        added = False
        for n in lengths:
            added = (sum(taken.values()) < MIN_CHECKS and add(n)) or added
        if not added:
            break
    return [r for n in lengths for r in by_length[n][: taken[n]]]


def check_tokens(chosen: Sequence[Recipe]) -> int:
    """The prompt tokens the checks prefill cold (each its whole prompt)."""
    return sum(r.context_tokens for r in chosen)


@dataclass(frozen=True)
class CacheControl:
    """A run's control, planned once the endpoint is served: what was asked and where that was stated
    (`stated`: "" for the layout's default), the recipes chosen, and the engine's cold path (`how`), or the line
    saying it has none (`unsupported`)."""

    asked: str
    chosen: tuple[Recipe, ...]
    engine: str
    how: str | None
    unsupported: str = ""
    stated: str = ""

    @property
    def said(self) -> bool:
        """Whether the run says the control's line at its end: checks were made, or it was turned off in so
        many words (by the flag or the suite)."""
        return bool(self.chosen and self.how is not None) or (self.asked == OFF and bool(self.stated))

    def record(self, checks: Iterable[CacheCheckRecord]) -> CacheCheck:
        """The manifest's record of the control, from the checks made so far."""
        if self.asked == OFF:
            return CacheCheck(verdict="off", engine=self.engine, asked=self.asked, stated=self.stated)
        if self.how is None:
            return CacheCheck(
                verdict="unsupported",
                engine=self.engine,
                how=self.unsupported,
                asked=self.asked,
                stated=self.stated,
                chosen=len(self.chosen),
                unchecked=len(self.chosen),
            )
        return decide(
            checks, chosen=[r.sample_id() for r in self.chosen], engine=self.engine, how=self.how, asked=self.asked
        ).model_copy(update={"stated": self.stated})


def plan_control(
    value: str | None,
    recipes: Sequence[Recipe],
    *,
    seed: int,
    engine: str,
    how: str | None,
    unsupported: str,
    computed_prefill: Callable[[], int],
    stated: str = "",
) -> CacheControl:
    """The control of a run of `recipes` (`computed_prefill` is asked only where the choice depends on it)."""
    ask = asked(value, recipes)
    if ask == OFF:
        return CacheControl(ask, (), engine, how, unsupported, stated)
    computed = computed_prefill() if ask == AUTO else 0
    return CacheControl(
        ask, tuple(choose(recipes, ask, seed=seed, computed_prefill=computed)), engine, how, unsupported, stated
    )
