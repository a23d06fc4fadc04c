"""`ctxprobe.run(...)`: plan a suite's samples, send them, record every one, and say how the run ended.

The command line and nightly jobs call this same function. Its exit codes (`RunResult.exit_code`) are
`tasks/exit_codes.py`'s table (what `ctxprobe run --help` shows): bad input is raised as `UserError` (2), and a
run that could write nothing at all as `WriteFailed` (4).

This module runs every kind of run the same way: the plan `plan.resolve` made of the options, its folder and
lock, the endpoint served (`send.serving`), the manifest from start to end (`bookkeeping`), and hands over
what differs by kind to the plan's strategy (`strategy`: fixed grid, `--stop decided`, `--against`), what a
resumed run keeps to `resume`, the one line and exit code to `ending`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.evals.records.cache_check import read_checks
from ctxprobe.evals.records.lock import writer_lock
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.outline import full_records
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore, claim_run_folder
from ctxprobe.evals.records.write_errors import WriteFailed, space_reserve
from ctxprobe.evals.run import engine_metrics
from ctxprobe.evals.run.bookkeeping import (
    cache_use,
    count_samples,
    drop_unsent,
    logprob_totals,
    remove_if_empty,
    run_manifest,
)
from ctxprobe.evals.run.cache_check import CacheControl, plan_control
from ctxprobe.evals.run.ending import ending, write_failed_result
from ctxprobe.evals.run.lint import run_lint
from ctxprobe.evals.run.plan import RunPlan, resolve
from ctxprobe.evals.run.prefill_cost import lanes_of, requests, tail_counter
from ctxprobe.evals.run.preflight import preflight
from ctxprobe.evals.run.result import ExitCode, RunResult
from ctxprobe.evals.run.resume import check_resumable
from ctxprobe.evals.run.reuse import measure_reuse
from ctxprobe.evals.run.send.cold_check import cold_path, send_checks
from ctxprobe.evals.run.send.interrupt import sigterm_as_interrupt
from ctxprobe.evals.run.send.logprobs import say_unavailable, wanted
from ctxprobe.evals.run.send.loop import EndpointLost, Progress, planned_tokens
from ctxprobe.evals.run.send.options import RunOptions, validated
from ctxprobe.evals.run.send.serving import Served, serving
from ctxprobe.evals.run.served_lengths import check_lengths, engine_line, same_limit
from ctxprobe.evals.run.strategy import Sender, Strategy, strategy_for
from ctxprobe.runners.deployment_lint import render_lint
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.sample import Recipe

__all__ = ["ExitCode", "RunResult", "check_resumable", "run", "run_planned"]


def run(
    options: RunOptions | None = None, *, on_progress: Callable[[Progress], None] | None = None, **kwargs: Any
) -> RunResult:
    """Run a suite (see `RunOptions`; keyword arguments are its parts, `endpoint=EndpointOptions(...)`, or any
    option by its flat name, `label="q4km"`, as the command line's flags) and return how it ended, with every
    output the command line writes (summary files, heatmaps, report.html, --junit, --summary-md).
    Bad input raises `UserError` before anything is sent or any folder is made."""
    return run_planned(resolve(options if options is not None else validated(RunOptions, kwargs)), on_progress)


def run_planned(plan: RunPlan, on_progress: Callable[[Progress], None] | None = None) -> RunResult:
    """Run a plan `resolve` checked (the command line resolves it before it loads the rest of the run)."""
    store, fresh = plan.store, plan.previous is None
    if fresh:  # a new run: its folder made here, atomically (never shared with a run begun alongside)
        store = RunStore(claim_run_folder(Path(plan.outputs.results_dir), plan.outputs.label))
    strategy = strategy_for(plan)
    try:
        # One writer per folder (a second run or resume of it is refused), with room kept for its last word.
        with writer_lock(store.dir), space_reserve(store.dir) as free_reserve:
            result, records = _run_in(store, plan, strategy, on_progress, free_reserve)
    finally:
        if fresh:
            remove_if_empty(store)
    return _with_outputs(result, strategy, records)


def _with_outputs(result: RunResult, strategy: Strategy, records: list[SampleRecord]) -> RunResult:
    """The summary files and the terminal table of the samples kept (`records`, the closing step's outlines: no
    needle is shown), and the strategy's outputs."""
    if records:
        from ctxprobe.evals.report.summary import write_report

        result.table = write_report(records, result.run_dir, result.manifest)
    result.written = strategy.outputs(result)
    return result


@dataclass
class _Outcome:
    """How the sending stopped, beyond the manifest's status."""

    lost_detail: str | None = None
    write_failed: WriteFailed | None = None
    metrics_before: dict[str, float] | None = field(default=None)
    metrics_after: dict[str, float] | None = None  # read before the cache-path control's cold re-sends
    control: CacheControl | None = None  # the cache-path control (None: planned no further than that)
    started: float = field(default_factory=time.time)  # when this run's sending began (a resumed run's own part)
    latest: dict[str, SampleRecord] | None = None  # see `records`

    def records(self, store: RunStore) -> dict[str, SampleRecord]:
        """The latest record of each sample (outlines), read once the sending has stopped. Nothing appends to
        samples.jsonl after that, so the cache-path checks, the manifest's last word, the ending, report.html
        and the summary files all take this one reading (a whole nightly's file is 140 MB)."""
        if self.latest is None:
            self.latest = store.latest_records(needles=False)
        return self.latest


def _run_in(
    store: RunStore,
    plan: RunPlan,
    strategy: Strategy,
    on_progress: Callable[[Progress], None] | None,
    free_reserve: Callable[[], None],
) -> tuple[RunResult, list[SampleRecord]]:
    """How the run ended, and the latest record of each sample it holds (outlines), read once at its end."""
    suite, previous = plan.suite, plan.previous
    with (
        sigterm_as_interrupt(),
        serving(plan.endpoint, suite, plan.logprobs) as served,
        contextlib.ExitStack() as stack,
    ):
        print(f"ctxprobe: {engine_line(served.engine, served.config.base_urls[0])}", file=sys.stderr, flush=True)
        builder = builder_for(served.counter)
        recipes = strategy.recipes(builder, served, stack)
        lengths = check_lengths(
            Counter(r.context_tokens for r in recipes), served.engine, plan.budgets.answer_tokens or 1
        )
        if not lengths.served:
            print(f"ctxprobe: {lengths.line()}", file=sys.stderr)
        lint = run_lint(served, plan.model_config, [r.context_tokens for r in recipes], plan.budgets.answer_tokens or 1)
        for line in render_lint(lint):
            print(f"ctxprobe: {line}", file=sys.stderr)
        budget = preflight(plan.mode, plan.budgets, suite, served, recipes)
        done = check_resumable(store, recipes, budget, same_limit(previous.engine, served.engine)) if previous else {}
        todo = [r for r in recipes if r.sample_id() not in done]
        manifest = run_manifest(
            plan.recorded, plan.outputs.label, suite, served, builder.tokenizer, previous, len(recipes)
        )
        manifest.deployment_lint = lint
        strategy.start(manifest)
        store.write_manifest(manifest)
        print(f"ctxprobe: {len(todo)} samples to run ({len(done)} already done) -> {store.dir}", file=sys.stderr)
        if todo and wanted(served.logprobs, served.engine.engine) is None:
            say_unavailable(served.engine.engine, served.logprobs.logprobs)
        progress = Progress(total=len(todo), total_tokens=planned_tokens(todo))
        control = _control(plan, recipes, served)
        outcome = _Outcome(metrics_before=engine_metrics.scrape(served.config, served.engine.engine), control=control)
        try:
            asyncio.run(
                strategy.send(todo, Sender(served, store, plan.order, progress, on_progress, budget, plan.prefill_rate))
            )
            if control.chosen and outcome.metrics_before is not None:  # the run's own counters, not the checks'
                outcome.metrics_after = engine_metrics.scrape(served.config, served.engine.engine)
            asyncio.run(send_checks(control.chosen, served, store, budget, outcome.records(store)))
            manifest.status = "finished"
        except EndpointLost as lost:
            manifest.status = "endpoint_lost"
            outcome.lost_detail = lost.detail
        except WriteFailed as failed:  # disk full, read-only: stop, keep every line written so far
            manifest.status, manifest.status_detail = "failed", str(failed)
            outcome.write_failed = failed
        except KeyboardInterrupt:
            manifest.status = "interrupted"
        except BaseException:
            manifest.status = "failed"
            raise
        finally:
            _close(
                store, manifest, served, strategy, progress, outcome, fresh=previous is None, free_reserve=free_reserve
            )
    records = list(outcome.records(store).values())
    if outcome.write_failed is not None:
        return write_failed_result(store, manifest, progress, outcome.write_failed), records
    _after(store, manifest, plan, records)
    undecided = plan.against.undecided if plan.against is not None else "exit"
    return ending(store, manifest, progress, plan.outputs, undecided, outcome.lost_detail, records), records


def _control(plan: RunPlan, recipes: list[Recipe], served: Served) -> CacheControl:
    """The run's cache-path control; an engine without a per-request cold path is said in one line."""
    how, unsupported = cold_path(served.engine.engine)
    control = plan_control(
        plan.cache_check,
        recipes,
        seed=plan.suite.seed,
        engine=served.engine.engine,
        how=how,
        unsupported=unsupported,
        stated=plan.cache_check_stated,
        computed_prefill=lambda: sum(
            r.computed
            for r in requests(lanes_of(recipes, plan.order, served.config.concurrency), tail_counter(served.counter))
        ),
    )
    if control.chosen and how is None:
        print(f"ctxprobe: cache path not checked: {unsupported}", file=sys.stderr)
    return control


def _close(
    store: RunStore,
    manifest: RunManifest,
    served: Served,
    strategy: Strategy,
    progress: Progress,
    outcome: _Outcome,
    *,
    fresh: bool,
    free_reserve: Callable[[], None],
) -> None:
    """The manifest's last word, whatever stopped the sending: the counts, the cache's use, the engine's
    metrics, the strategy's state (the gate's, the stopping rule's); a new run that sent nothing leaves no
    folder."""
    store.close()
    latest = outcome.records(store)  # outlines: counts, cache use and the strategy's state need no needle
    manifest.cache = cache_use(list(latest.values()))
    manifest.replica_events = progress.replica_events or None
    manifest.order_detail = progress.order_detail
    if outcome.metrics_before is not None and manifest.status != "endpoint_lost":  # a gone server: no wait
        after = outcome.metrics_after or engine_metrics.scrape(served.config, served.engine.engine)
        manifest.engine_metrics = engine_metrics.deltas(outcome.metrics_before, after)
    manifest.cache_source = engine_metrics.SAMPLES_SOURCE if manifest.cache else None
    if manifest.cache is None and latest:  # the replies did not say: the engine's own counters may
        manifest.cache = engine_metrics.cache_from_metrics(manifest.engine_metrics)
        manifest.cache_source = engine_metrics.METRICS_SOURCE if manifest.cache else None
    count_samples(manifest, latest)
    manifest.logprobs = logprob_totals(latest, served.logprobs.top_logprobs)
    strategy.close(manifest, latest)
    if outcome.control is not None:
        manifest.cache_check = outcome.control.record(read_checks(store.dir).values())
        if outcome.control.said:
            print(f"ctxprobe: {manifest.cache_check.line()}", file=sys.stderr)
    # this run's answers (a resumed run's earlier ones were served by another process, perhaps another engine);
    # the engine's own computed count is theirs alone where nothing else reached it
    others = (manifest.logprobs and manifest.logprobs.extra_requests) or (
        manifest.cache_check and manifest.cache_check.chosen
    )
    this_run = [r for r in latest.values() if r.finished_at >= outcome.started]
    # an independent prompt's bound runs to its first needle: those few records are read whole (a nested one's
    # bound is its shared stream, which its outline keeps)
    whole = full_records(store.samples_path, [r.sample.sample_id for r in this_run if r.sample.recipe.nested is None])
    this_run = [whole.get(r.sample.sample_id, r) for r in this_run]
    manifest.reuse = measure_reuse(
        this_run,
        manifest.order_detail,
        manifest.engine_metrics,
        served.engine.engine,
        served.engine.reuse_block,
        only_answers=not others,
    )
    manifest.samples_count_off = sum(1 for r in latest.values() if r.prompt_tokens_off is not None)
    manifest.updated = time.time()
    if fresh and not latest and not progress.sent and manifest.status != "finished":
        drop_unsent(store)  # nothing was sent: leave no empty run folder behind
        return
    if outcome.write_failed is not None:
        free_reserve()  # a full disk: the space kept for this manifest
    try:
        store.write_manifest(manifest)
    except WriteFailed as failed:  # the status cannot be written either: say why in the ending
        outcome.write_failed = outcome.write_failed or failed


def _after(store: RunStore, manifest: RunManifest, plan: RunPlan, records: list[SampleRecord]) -> None:
    """What follows a run written in full: the judge's verdicts (where asked for, reached with the run's client
    settings) and report.html, of `records` (the closing step's outlines)."""
    judge = plan.judge
    if judge is not None and judge.judge_endpoint and manifest.status == "finished":
        from ctxprobe.evals.judge.verdicts import judge_run

        summary = judge_run(
            store.dir, store.latest_records().values(), judge.judge_endpoint, judge.judge_model, plan.endpoint
        )
        print(f"ctxprobe: {summary.line()}", file=sys.stderr)
    if not plan.outputs.no_report and (manifest.samples_done or manifest.samples_errored):
        from ctxprobe.evals.records.load import Run
        from ctxprobe.evals.report.html_report.render import write_folder_report

        try:  # report.html: what a nightly job attaches
            write_folder_report(store.dir, Run(dir=store.dir, manifest=store.load_manifest(), records=records))
        except WriteFailed as failed:  # the samples and manifest are written; the page is not
            warnings.warn(f"report.html not written: {failed}", stacklevel=3)
