"""`ctxprobe.run(...)`: plan a suite's samples, send them, record every one, and say how the run ended.

The command line and nightly jobs call this same function. Its exit codes (`RunResult.exit_code`):
0 every sample scored (or errors allowed); 1 samples ended in errors; 2 bad input (raised as
`UserError`); 3 the endpoint went away mid-run (resume later); 4 a run file could not be written (disk
full, read-only; status `failed`, resume elsewhere; raised as `WriteFailed` when nothing could be written
at all); 130 interrupted (Ctrl-C or SIGTERM).

This module starts a run (its folder, lock, plan and manifest) and hands over to the parts that do the rest:
`resume` (what a resumed run keeps), `sending` (how the samples go out), `bookkeeping` (the manifest from
start to end), `ending` (the one line and exit code), `signals` (SIGTERM as Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.lock import writer_lock
from ctxprobe.evals.records.store import RunStore, claim_run_folder
from ctxprobe.evals.records.write_errors import WriteFailed, space_reserve
from ctxprobe.evals.run import engine_metrics
from ctxprobe.evals.run.bookkeeping import (cache_use, count_samples, drop_unsent, logprob_totals, remove_if_empty,
                                            run_manifest)
from ctxprobe.evals.run.ending import ending, write_failed_result
from ctxprobe.evals.run.preflight import preflight
from ctxprobe.evals.run.prepare import PreparedRun, prepare_run
from ctxprobe.evals.run.result import ExitCode, RunResult
from ctxprobe.evals.run.resume import check_resumable
from ctxprobe.evals.run.rounds import capped_suite, cell_caps, fixed_grid_tokens, stop_rule, stop_summary
from ctxprobe.evals.run.sending import SendPlan, close_lockstep, open_lockstep, send_plan
from ctxprobe.evals.run.send.interrupt import sigterm_as_interrupt
from ctxprobe.evals.run.send.logprobs import say_unavailable, wanted
from ctxprobe.evals.run.send.loop import EndpointLost, Progress
from ctxprobe.evals.run.send.options import RunOptions, validated
from ctxprobe.evals.run.send.serving import Served, serving
from ctxprobe.runners.settings import ClientSettings, part
from ctxprobe.tasks.build import PromptBuilder, builder_for
from ctxprobe.tasks.suite import Suite

__all__ = ["ExitCode", "RunResult", "check_resumable", "run", "run_prepared"]


def run(options: RunOptions | None = None, *, on_progress: Callable[[Progress], None] | None = None,
        **kwargs: Any) -> RunResult:
    """Run a suite (see `RunOptions`; keyword arguments are its fields) and return how it ended, with every
    output the command line writes (summary files, heatmaps, report.html, --junit, --summary-md).
    Bad input raises `UserError` before anything is sent or any folder is made."""
    return run_prepared(prepare_run(options if options is not None else validated(RunOptions, kwargs)), on_progress)


def run_prepared(prepared: PreparedRun, on_progress: Callable[[Progress], None] | None = None) -> RunResult:
    """Run a plan `prepare_run` checked (the command line checks it before it loads the rest of the run)."""
    opts, suite, store, previous = prepared.options, prepared.suite, prepared.store, prepared.previous
    if previous is None:  # a new run: its folder made here, atomically (never shared with a run begun alongside)
        store = RunStore(claim_run_folder(Path(opts.results_dir), opts.label))
    try:
        # One writer per folder (a second run or resume of it is refused), with room kept for its last word.
        with writer_lock(store.dir), space_reserve(store.dir) as free_reserve:
            result = _run_in(store, opts, suite, previous, on_progress, free_reserve)
    finally:
        if previous is None:
            remove_if_empty(store)
    return _with_outputs(result, opts)


def _with_outputs(result: RunResult, opts: RunOptions) -> RunResult:
    """The summary files and the terminal table of the samples kept, and the paired gate's CI outputs."""
    records = result.records()
    if records:
        from ctxprobe.evals.report.summary import write_report

        result.table = write_report(records, result.run_dir, result.manifest)
    if result.manifest.paired_gate is not None:
        from ctxprobe.evals.compare.against import gate_cases
        from ctxprobe.evals.compare.sequential.ci_outputs import write_ci_outputs

        cases = gate_cases(result.manifest.paired_gate, opts.label or result.run_dir.name)
        result.written = write_ci_outputs(cases, "ctxprobe paired gate", opts.junit, opts.summary_md)
    return result


@dataclass
class _Outcome:
    """How the sending stopped, beyond the manifest's status."""

    lost_detail: str | None = None
    write_failed: WriteFailed | None = None
    metrics_before: dict[str, float] | None = field(default=None)


def _run_in(store: RunStore, opts: RunOptions, suite: Suite, previous: RunManifest | None,
            on_progress: Callable[[Progress], None] | None, free_reserve: Callable[[], None]) -> RunResult:
    with sigterm_as_interrupt(), serving(opts, suite) as served, contextlib.ExitStack() as stack:
        builder = builder_for(served.counter)
        plan = _plan(opts, suite, served, store, stack, builder)
        budget = preflight(opts, suite, served, plan.recipes)
        done = check_resumable(store, plan.recipes, budget) if previous else {}
        todo = [r for r in plan.recipes if r.sample_id() not in done]
        manifest = run_manifest(opts, suite, served, builder.tokenizer, previous, len(plan.recipes))
        if plan.rule.stop == "decided":
            manifest.stop = plan.rule.model_dump()
            manifest.fixed_grid_prompt_tokens = fixed_grid_tokens(suite)
        elif plan.paired is not None:  # the fixed alternative: the candidate sent every sample the baseline pairs with
            manifest.fixed_grid_prompt_tokens = sum(r.context_tokens for r in plan.recipes)
        store.write_manifest(manifest)
        print(f"ctxprobe: {len(todo)} samples to run ({len(done)} already done) -> {store.dir}", file=sys.stderr)
        if todo and wanted(served.logprobs, served.engine.engine) is None:
            say_unavailable(served.engine.engine, served.logprobs.logprobs)
        progress = Progress(total=len(todo))
        outcome = _Outcome(metrics_before=engine_metrics.scrape(served.config, served.engine.engine))
        try:
            asyncio.run(send_plan(plan, todo, served, store, opts.order, progress, on_progress, budget))
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
            _close(store, manifest, served, plan, progress, outcome, fresh=previous is None,
                   free_reserve=free_reserve)
    if outcome.write_failed is not None:
        return write_failed_result(store, manifest, progress, outcome.write_failed)
    _after(store, manifest, opts)
    return ending(store, manifest, progress, opts, outcome.lost_detail)


def _plan(opts: RunOptions, suite: Suite, served: Served, store: RunStore, stack: contextlib.ExitStack,
          builder: PromptBuilder) -> SendPlan:
    """The recipes to send: the suite's under its stopping rule, or the baseline's of a paired run."""
    rule = stop_rule(opts, suite)
    if not opts.against:
        recipes = capped_suite(suite, rule).recipes(builder.recipe_tokenizer, mode=opts.mode,
                                                    default_mode=served.default_mode)
        return SendPlan(recipes, rule)
    from ctxprobe.evals.compare.against import paired_run

    extend = None
    if opts.baseline_endpoint:
        from ctxprobe.evals.run.lockstep import extension_recipes

        cap = rule.cap(suite.samples)
        extend = lambda base: extension_recipes(base, cap, builder.recipe_tokenizer)  # noqa: E731
    paired = paired_run(opts.against, opts.fail_if_drop or 0.0, 0.05, builder.tokenizer, extend, opts.metric,
                        opts.kl_margin)
    lockstep = open_lockstep(stack, opts, suite, served, store, paired) if paired.extension else None
    return SendPlan(paired.recipes, rule, paired, lockstep)


def _close(store: RunStore, manifest: RunManifest, served: Served, plan: SendPlan, progress: Progress,
           outcome: _Outcome, *, fresh: bool, free_reserve: Callable[[], None]) -> None:
    """The manifest's last word, whatever stopped the sending: the counts, the cache's use, the engine's
    metrics, the gate's or the stopping rule's state; a new run that sent nothing leaves no folder."""
    store.close()
    latest = store.latest_records()
    manifest.cache = cache_use(list(latest.values()))
    manifest.replica_events = progress.replica_events or None
    manifest.order_detail = progress.order_detail
    if outcome.metrics_before is not None and manifest.status != "endpoint_lost":  # a gone server: no wait
        manifest.engine_metrics = engine_metrics.deltas(outcome.metrics_before,
                                                        engine_metrics.scrape(served.config, served.engine.engine))
    manifest.cache_source = engine_metrics.SAMPLES_SOURCE if manifest.cache else None
    if manifest.cache is None and latest:  # the replies did not say: the engine's own counters may
        manifest.cache = engine_metrics.cache_from_metrics(manifest.engine_metrics)
        manifest.cache_source = engine_metrics.METRICS_SOURCE if manifest.cache else None
    count_samples(manifest, latest)
    manifest.logprobs = logprob_totals(latest, served.logprobs.top_logprobs)
    if plan.paired is not None:
        from ctxprobe.evals.compare.against import gate_report, update

        if plan.lockstep is not None:
            close_lockstep(plan.lockstep, plan.paired, manifest.status)
        update(plan.paired, list(latest.values()))
        manifest.paired_gate = gate_report(plan.paired)
    elif plan.rule.stop == "decided":
        manifest.stopped_cells = stop_summary(latest.values(), plan.rule, cell_caps(plan.recipes))
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


def _after(store: RunStore, manifest: RunManifest, opts: RunOptions) -> None:
    """What follows a run written in full: the judge's verdicts (where asked for) and report.html."""
    if opts.judge_endpoint and manifest.status == "finished":
        from ctxprobe.evals.judge.verdicts import judge_run

        summary = judge_run(store.dir, store.latest_records().values(), opts.judge_endpoint, opts.judge_model,
                            part(opts, ClientSettings))
        print(f"ctxprobe: {summary.line()}", file=sys.stderr)
    if not opts.no_report and (manifest.samples_done or manifest.samples_errored):
        from ctxprobe.evals.report.html.render import write_folder_report

        try:
            write_folder_report(store.dir)  # report.html: what a nightly job attaches
        except WriteFailed as failed:  # the samples and manifest are written; the page is not
            warnings.warn(f"report.html not written: {failed}", stacklevel=3)
