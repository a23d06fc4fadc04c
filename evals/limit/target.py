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
from ctxprobe.tasks.token_counter import TokenCounter

_SERVER_ERROR = re.compile(r"HTTP 5\d\d\b")  # the client's http_error detail starts "HTTP <status> from <url>"
GOLDEN = 61.803398875  # depths of successive samples: an even, deterministic spread over 0-100

__all__ = ["TargetLimits", "TaskSpec", "accepted_length", "effective_length"]


def accepted_length(config: EndpointConfig, counter: TokenCounter, *, start: int,
                    max_length: int, configured: int | None, answer_room: int) -> AcceptedResult:
    """Find the longest prompt the endpoint takes, each probe asking for `answer_room` answer tokens."""

    async def search() -> AcceptedResult:
        async with EndpointClient(config) as client:

            async def try_length(n: int) -> Probe:
                recipe = builder_for(counter).recipe(family="niah", haystack="noise", context_tokens=n, depth=50.0,
                                                     seed=n, window=0, mode=config.mode)
                sample = await asyncio.to_thread(build_sample, recipe, counter)
                try:
                    response = await client.send(sample.prompt, max_tokens=answer_room,
                                                 planned_tokens=sample.planned_tokens, seed=0)
                except EndpointError as err:
                    if err.kind is ErrorKind.rejected_too_long:
                        return Probe(sample.planned_tokens, "too_long", prompt_tokens=err.prompt_tokens,
                                     prompt_at_least=err.prompt_at_least, stated_limit=err.limit, detail=err.detail)
                    if err.kind is ErrorKind.http_error and _SERVER_ERROR.match(err.detail):
                        return Probe(sample.planned_tokens, "failed", detail=err.detail)
                    return Probe(sample.planned_tokens, "error", detail=f"{err.kind.value}: {err.detail}")
                return Probe(sample.planned_tokens, "accepted", prompt_tokens=response.prompt_tokens)

            return await find_accepted(try_length, start=start, max_length=max_length, max_tokens=answer_room,
                                       configured=configured)

    return asyncio.run(search())


def effective_length(config: EndpointConfig, counter: TokenCounter, store: RunStore,
                     tasks: list[TaskSpec], search: LimitConfig, haystack: str,
                     on_progress: Callable[[int, Progress], None] | None = None) -> LimitResult:
    """Adaptive search for the longest length whose accuracy stays above the threshold; every sample
    it sends is recorded in the run folder like any run's. `on_progress(length, progress)` after each one."""
    taken: dict[int, int] = {}

    def measure(length: int, n_more: int) -> tuple[int, int]:
        first = taken.get(length, 0)
        taken[length] = first + n_more
        recipes = []
        for i in range(first, first + n_more):
            task = tasks[i % len(tasks)]
            recipes.append(builder_for(counter).recipe(
                family=task.family, params=task.params, haystack=haystack, context_tokens=length,
                depth=round((i * GOLDEN) % 100.0, 1), seed=i, mode=config.mode))

        async def go() -> tuple[int, int]:
            shown = None if on_progress is None else (lambda _record, done: on_progress(length, done))
            async with EndpointClient(config) as client:
                progress = await run_recipes(recipes, client, store, concurrency=config.concurrency, counter=counter,
                                             on_record=shown)
            return progress.correct, progress.done - progress.errors

        return asyncio.run(go())

    return find_effective_length(measure, search)
