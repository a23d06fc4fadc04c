"""How a run's samples are sent: all at once (one client per mode), round after round (`--stop decided`),
or in paired rounds against a baseline (`--against`), with `--baseline-endpoint` the baseline's missing
samples sent to it in the same rounds (lockstep)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.bookkeeping import count_samples, run_manifest
from ctxprobe.evals.run.rounds import cell_caps, next_round
from ctxprobe.evals.run.send.answer_budget import AnswerBudget
from ctxprobe.evals.run.send.logprobs import LogprobCapture, wanted
from ctxprobe.evals.run.send.loop import Progress, run_recipes
from ctxprobe.evals.run.send.options import RunOptions
from ctxprobe.evals.run.send.order import Order
from ctxprobe.evals.run.send.serving import Served, serving
from ctxprobe.evals.compare.sequential.cells import StopRule
from ctxprobe.runners.response import LOGPROBS_UNAVAILABLE
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite


@dataclass
class SendPlan:
    """What a run sends: its recipes under its stopping rule, or a paired run's rounds (with the lockstep
    baseline's side, where there is one)."""

    recipes: list[Recipe]
    rule: StopRule
    paired: Any = None
    lockstep: Lockstep | None = None


async def send_plan(plan: SendPlan, todo: list[Recipe], served: Served, store: RunStore, order: Order,
                    progress: Progress, on_progress: Callable[[Progress], None] | None, budget: AnswerBudget) -> None:
    """Send a run's samples the way its plan says: paired rounds, rounds until decided, or all at once."""
    if plan.paired is not None:
        await send_paired(plan.paired, served, store, order, progress, on_progress, budget, plan.lockstep)
    elif plan.rule.stop == "decided":
        await send_rounds(plan.recipes, plan.rule, served, store, order, progress, on_progress, budget)
    else:
        await send(todo, served, store, order, progress, on_progress, budget)


async def send(recipes: list[Recipe], served: Served, store: RunStore, order: Order, progress: Progress,
                on_progress: Callable[[Progress], None] | None, budget: AnswerBudget) -> None:
    """Send the recipes, one client per mode (a suite may mix chat and completions tasks); `progress`
    counts them all."""
    from ctxprobe.runners.endpoint import EndpointClient
    from ctxprobe.runners.http_json import Unreachable, request_json

    def still_there() -> bool:  # one call per replica, within the run's --timeout: a frozen server costs no more
        for url in served.config.base_urls:
            try:
                request_json("GET", f"{url}/v1/models", timeout_s=min(served.config.timeout, 30.0),
                             api_key_env=served.config.api_key_env)
                return True
            except Unreachable:
                continue
        return False

    show = (lambda record, prog: on_progress(prog)) if on_progress else None
    want = wanted(served.logprobs, served.engine.engine)
    for mode in dict.fromkeys(r.mode for r in recipes):
        group = [r for r in recipes if r.mode == mode]
        config = served.config.model_copy(update={"mode": mode})
        async with EndpointClient(config, on_replica_event=progress.replica_event) as client:
            capture = (LogprobCapture(client, served.engine.engine, served.logprobs.top_logprobs) if want
                       else LOGPROBS_UNAVAILABLE if want is None else None)
            await run_recipes(group, client, store, concurrency=config.concurrency, counter=served.counter,
                              order=order, on_record=show, still_there=still_there, progress=progress,
                              budget=budget, context_length=served.engine.context_length, logprobs=capture)


async def send_rounds(recipes: list[Recipe], rule: StopRule, served: Served, store: RunStore, order: Order,
                       progress: Progress, on_progress: Callable[[Progress], None] | None,
                       budget: AnswerBudget) -> None:
    """`--stop decided`: send round after round (`rounds.next_round`) until every cell is decided or capped."""
    caps, sent = cell_caps(recipes), set[str]()
    while batch := next_round(recipes, store.latest_records().values(), rule, caps, sent):
        sent.update(r.sample_id() for r in batch)
        await send(batch, served, store, order, progress, on_progress, budget)


async def send_paired(paired: Any, served: Served, store: RunStore, order: Order, progress: Progress,
                       on_progress: Callable[[Progress], None] | None, budget: AnswerBudget,
                       lockstep: "Lockstep | None" = None) -> None:
    """`--against`: send the baseline's samples round after round until every family is decided or used up;
    with `--baseline-endpoint`, a round's samples the baseline lacks go to both endpoints at once."""
    from ctxprobe.evals.compare.against import next_paired_round
    from ctxprobe.evals.run.lockstep import missing_on_baseline, scored

    sent = set[str]()
    while True:
        if lockstep is not None:
            paired.add_baseline(scored(lockstep.store.latest_records().values()))
        batch = next_paired_round(paired, list(store.latest_records().values()), sent)
        if not batch:
            return
        sent.update(r.sample_id() for r in batch)
        sends = [send(batch, served, store, order, progress, on_progress, budget)]
        if lockstep is not None and (missing := missing_on_baseline(batch, paired.extension, lockstep.store)):
            lockstep.progress.total += len(missing)
            sends.append(send(missing, lockstep.served, lockstep.store, order, lockstep.progress, None, budget))
        await asyncio.gather(*sends)


@dataclass
class Lockstep:
    """The baseline endpoint's side of a lockstep paired run: where it is served, its run folder."""

    served: Served
    store: RunStore
    manifest: RunManifest
    progress: Progress


def open_lockstep(stack: contextlib.ExitStack, opts: RunOptions, suite: Suite, served: Served, store: RunStore,
                   paired: Any) -> Lockstep:
    """Serve `--baseline-endpoint` (prompts built with the candidate's counter: the same text and ids) and
    open the extension's run folder, its manifest written as running."""
    from ctxprobe.evals.run.lockstep import baseline_options, extension_store

    base_opts = baseline_options(opts)
    base_served = stack.enter_context(serving(base_opts, suite))
    base_served = dataclasses.replace(base_served, counter=served.counter)
    ext = extension_store(store.dir)
    ext.dir.mkdir(exist_ok=True)
    earlier = ext.load_manifest() if (ext.dir / "manifest.json").is_file() else None
    manifest = run_manifest(base_opts.model_copy(update={"label": f"{opts.label}-baseline-extension",
                                                      "against": None}),
                         suite, base_served, paired.baseline.manifest.tokenizer, earlier, len(paired.extension))
    ext.write_manifest(manifest)
    stack.callback(ext.close)
    return Lockstep(base_served, ext, manifest, Progress(total=0))


def close_lockstep(lockstep: Lockstep, paired: Any, status: str) -> None:
    """The extension's manifest, final: how many samples it holds, its status the run's."""
    from ctxprobe.evals.run.lockstep import scored

    lockstep.store.close()
    latest = lockstep.store.latest_records()
    paired.add_baseline(scored(latest.values()))
    manifest = lockstep.manifest
    manifest.status = status
    count_samples(manifest, latest)
    manifest.updated = time.time()
    lockstep.store.write_manifest(manifest)
