"""The four context lengths of one endpoint: advertised, configured, accepted, effective."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from ctxprobe.evals.limit.accept import AcceptedResult, Probe, find_accepted
from ctxprobe.evals.limit.search import LimitConfig, LimitResult, find_effective_length
from ctxprobe.evals.records.limit import TargetLimits, TaskSpec
from ctxprobe.evals.records.record import ErrorKind
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.loop import Progress, run_recipes
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.tasks.build import build_sample, builder_for
from ctxprobe.tasks.errors import TooShort
from ctxprobe.tasks.sample import Mode, Recipe
from ctxprobe.tasks.token_counter import TokenCounter

_SERVER_ERROR = re.compile(r"HTTP 5\d\d\b")  # the client's http_error detail starts "HTTP <status> from <url>"
GOLDEN = 61.803398875  # depths of successive samples: an even, deterministic spread over 0-100

__all__ = ["TargetLimits", "TaskSpec", "accepted_length", "effective_length"]


def accepted_length(
    config: EndpointConfig,
    counter: TokenCounter,
    *,
    start: int,
    max_length: int,
    configured: int | None,
    answer_room: int,
) -> AcceptedResult:
    """Find the longest prompt the endpoint takes, each probe asking for `answer_room` answer tokens."""

    async def search() -> AcceptedResult:
        async with EndpointClient(config) as client:

            async def try_length(n: int) -> Probe:
                recipe = builder_for(counter).recipe(
                    family="niah", haystack="noise", context_tokens=n, depth=50.0, seed=n, window=0, mode=config.mode
                )
                sample = await asyncio.to_thread(build_sample, recipe, counter)
                try:
                    response = await client.send(
                        sample.prompt, max_tokens=answer_room, planned_tokens=sample.planned_tokens, seed=0
                    )
                except EndpointError as err:
                    if err.kind is ErrorKind.rejected_too_long:
                        return Probe(
                            sample.planned_tokens,
                            "too_long",
                            prompt_tokens=err.prompt_tokens,
                            prompt_at_least=err.prompt_at_least,
                            stated_limit=err.limit,
                            detail=err.detail,
                        )
                    if err.kind is ErrorKind.http_error and _SERVER_ERROR.match(err.detail):
                        return Probe(sample.planned_tokens, "failed", detail=err.detail)
                    return Probe(sample.planned_tokens, "error", detail=f"{err.kind.value}: {err.detail}")
                return Probe(sample.planned_tokens, "accepted", prompt_tokens=response.prompt_tokens)

            return await find_accepted(
                try_length, start=start, max_length=max_length, max_tokens=answer_room, configured=configured
            )

    return asyncio.run(search())


def search_recipes(
    counter: TokenCounter, tasks: list[TaskSpec], haystack: str, mode: Mode, length: int, first: int, n: int
) -> list[Recipe]:
    """The effective search's samples `first`..`first + n - 1` at `length`: the tasks in turn, each its own
    seed, depths spread evenly."""
    builder = builder_for(counter)
    return [
        builder.recipe(
            family=tasks[i % len(tasks)].family,
            params=tasks[i % len(tasks)].params,
            haystack=haystack,
            context_tokens=length,
            depth=round((i * GOLDEN) % 100.0, 1),
            seed=i,
            mode=mode,
        )
        for i in range(first, first + n)
    ]


def shortest_length(
    counter: TokenCounter,
    tasks: list[TaskSpec],
    haystack: str,
    mode: Mode,
    *,
    up_to: int,
    samples: int,
    granularity: int,
) -> tuple[int, int]:
    """(the shortest length on the `granularity` grid, at most `up_to`, at which the search's first `samples`
    samples can all be built: the tasks' own shortest prompt, found by bisection without a request; the
    largest answer budget among them). `up_to` itself when even it is too short (its build then says why)."""

    def budget_at(length: int) -> int | None:
        try:
            return max(
                build_sample(r, counter).max_tokens
                for r in search_recipes(counter, tasks, haystack, mode, length, 0, samples)
            )
        except TooShort:
            return None

    top = budget_at(up_to)
    if top is None:
        return up_to, 0
    low, high = 0, up_to  # `high` builds; nothing at or below `low` does
    while high - low > granularity:
        mid = max(granularity, (low + high) // 2 // granularity * granularity)
        if mid <= low or mid >= high:
            break
        if budget_at(mid) is None:
            low = mid
        else:
            high = mid
    return high, top


def effective_length(
    config: EndpointConfig,
    counter: TokenCounter,
    store: RunStore,
    tasks: list[TaskSpec],
    search: LimitConfig,
    haystack: str,
    on_progress: Callable[[int, Progress], None] | None = None,
    context_length: int | None = None,
) -> LimitResult:
    """Adaptive search for the longest length whose accuracy stays above the threshold; every sample
    it sends is recorded in the run folder like any run's. `on_progress(length, progress)` after each one.
    `context_length`: the prompt and answer tokens the endpoint was found to take; a sample that does not
    fit is recorded as an error and not sent."""
    taken: dict[int, int] = {}

    def measure(length: int, n_more: int) -> tuple[int, int]:
        first = taken.get(length, 0)
        taken[length] = first + n_more
        recipes = search_recipes(counter, tasks, haystack, config.mode, length, first, n_more)

        async def go() -> tuple[int, int]:
            shown = None if on_progress is None else (lambda _record, done: on_progress(length, done))
            async with EndpointClient(config) as client:
                progress = await run_recipes(
                    recipes,
                    client,
                    store,
                    concurrency=config.concurrency,
                    counter=counter,
                    on_record=shown,
                    context_length=context_length,
                )
            return progress.correct, progress.done - progress.errors

        return asyncio.run(go())

    return find_effective_length(measure, search)
