"""What every strategy shares: the `Strategy` a run asks for what differs by kind, and the `Sender` that
sends a list of recipes to one served endpoint (one client per mode: a suite may mix chat and completions
tasks), whatever the strategy that chose them."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.plan import RunPlan
from ctxprobe.evals.run.result import RunResult
from ctxprobe.evals.run.send.answer_budget import AnswerBudget
from ctxprobe.evals.run.send.logprobs import LogprobCapture, wanted
from ctxprobe.evals.run.send.loop import Progress, run_recipes
from ctxprobe.evals.run.send.order import Order
from ctxprobe.evals.run.send.serving import Served
from ctxprobe.runners.response import LOGPROBS_UNAVAILABLE
from ctxprobe.tasks.build import PromptBuilder
from ctxprobe.tasks.sample import Recipe


@dataclass
class Sender:
    """Sends recipes to one served endpoint into one run folder, `progress` counting them all."""

    served: Served
    store: RunStore
    order: Order
    progress: Progress
    on_progress: Callable[[Progress], None] | None
    budget: AnswerBudget
    prefill_rate: float | None = None  # tokens/s known before the run (--prefill-rate), then as measured

    async def send(self, recipes: list[Recipe]) -> None:
        from ctxprobe.runners.endpoint import EndpointClient

        served = self.served
        on_progress = self.on_progress
        show = (lambda record, prog: on_progress(prog)) if on_progress else None
        want = wanted(served.logprobs, served.engine.engine)
        for mode in dict.fromkeys(r.mode for r in recipes):
            group = [r for r in recipes if r.mode == mode]
            config = served.config.model_copy(update={"mode": mode})
            if self.prefill_rate is not None and config.prefill_rate is None:
                config = config.model_copy(update={"prefill_rate": self.prefill_rate})
            async with EndpointClient(config, on_replica_event=self.progress.replica_event) as client:
                self.progress.longest = client.longest_in_flight
                capture = (
                    LogprobCapture(client, served.engine.engine, served.logprobs.top_logprobs)
                    if want
                    else LOGPROBS_UNAVAILABLE
                    if want is None
                    else None
                )
                await run_recipes(
                    group,
                    client,
                    self.store,
                    concurrency=config.concurrency,
                    counter=served.counter,
                    order=self.order,
                    on_record=show,
                    still_there=self.still_there,
                    progress=self.progress,
                    budget=self.budget,
                    context_length=served.engine.context_length,
                    logprobs=capture,
                    on_tick=self.on_progress,
                )
                if client.prefill.tokens:  # measured: the next mode's client starts from it
                    self.prefill_rate = client.prefill.per_s

    def still_there(self) -> bool:
        """One call per replica, within the run's --timeout: a frozen server costs no more."""
        from ctxprobe.runners.http_json import Unreachable, request_json

        config = self.served.config
        for url in config.base_urls:
            try:
                request_json(
                    "GET", f"{url}/v1/models", timeout_s=min(config.timeout, 30.0), api_key_env=config.api_key_env
                )
                return True
            except Unreachable:
                continue
        return False


class Strategy(ABC):
    """What differs between kinds of run. The run calls, in order: `recipes` (once the endpoint is served),
    `start` (the manifest before the first request), `send`, `close` (the manifest's last word, whatever
    stopped the sending), then `outputs` for a run written in full."""

    def __init__(self, plan: RunPlan) -> None:
        self.plan = plan
        self.planned: list[Recipe] = []

    @abstractmethod
    def recipes(self, builder: PromptBuilder, served: Served, stack: contextlib.ExitStack) -> list[Recipe]:
        """Every recipe the run may send (the cap's, for a rule that stops early)."""

    def start(self, manifest: RunManifest) -> None:
        """What the manifest says of the strategy before anything is sent."""

    @abstractmethod
    async def send(self, todo: list[Recipe], sender: Sender) -> None:
        """Send what is left to send (`todo`: the planned recipes not finished yet)."""

    def close(self, manifest: RunManifest, latest: dict[str, SampleRecord]) -> None:
        """The strategy's part of the manifest's last word."""

    def outputs(self, result: RunResult) -> list[Path]:
        """Files written after the run (the paired gate's CI outputs)."""
        return []

    def _suite_recipes(self, builder: PromptBuilder, served: Served) -> list[Recipe]:
        """The suite's recipes, planned to the stopping rule's cap."""
        from ctxprobe.evals.run.rounds import capped_suite

        plan = self.plan
        return capped_suite(plan.suite, plan.rule).recipes(
            builder.recipe_tokenizer,
            mode=plan.mode,
            default_mode=served.default_mode,
            reuse_block=served.engine.reuse_block,
        )
