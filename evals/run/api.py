"""`ctxprobe.run(...)`: plan a suite's samples, send them, record every one, and say how the run ended.

The command line and nightly jobs call this same function. Its exit codes (`RunResult.exit_code`):
0 every sample scored (or errors allowed); 1 samples ended in errors; 2 bad input (raised as
`UserError`); 3 the endpoint went away mid-run (resume later); 4 a run file could not be written (disk
full, read-only; status `failed`, resume elsewhere; raised as `WriteFailed` when nothing could be written
at all); 130 interrupted (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from ctxprobe.evals.log.manifest import RunManifest, ctxprobe_version, public_url, saved_options
from ctxprobe.evals.log.record import ErrorKind, SampleRecord
from ctxprobe.evals.log.lock import LOCK, writer_lock
from ctxprobe.evals.log.store import RunStore, claim_run_folder
from ctxprobe.evals.log.write_errors import RESERVE, WRITE_FAILED_EXIT, WriteFailed, space_reserve
from ctxprobe.evals.run import engine_metrics
from ctxprobe.evals.send.loop import EndpointLost, Progress, run_recipes
from ctxprobe.evals.send.options import RunOptions, validated
from ctxprobe.evals.send.order import Order
from ctxprobe.evals.send.answer_budget import AnswerBudget
from ctxprobe.evals.run.preflight import preflight
from ctxprobe.evals.run.prepare import PreparedRun, prepare_run
from ctxprobe.evals.run.rounds import capped_suite, cell_caps, fixed_grid_tokens, next_round, stop_rule, stop_summary
from ctxprobe.evals.sequential.cells import StopRule
from ctxprobe.evals.send.serving import Served, serving
from ctxprobe.runners.settings import ClientSettings, part
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite


class ExitCode(IntEnum):
    OK = 0
    SAMPLE_ERRORS = 1  # also: `--against`, a row FAILs
    BAD_INPUT = 2
    ENDPOINT_LOST = 3
    WRITE_FAILED = WRITE_FAILED_EXIT
    UNDECIDED = 6  # `--against`: no row FAILs, some stay undecided
    INTERRUPTED = 130


@dataclass
class RunResult:
    run_dir: Path
    manifest: RunManifest
    progress: Progress
    exit_code: ExitCode
    message: str  # how the run ended, one line for a person
    table: str = ""  # the accuracy table the command line prints (summary files written beside the samples)
    written: list[Path] = dataclasses.field(default_factory=list)  # the CI outputs asked for (--junit, --summary-md)

    def records(self) -> list[SampleRecord]:
        return list(RunStore(self.run_dir).latest_records().values())


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
            _remove_if_empty(store)
    return _with_outputs(result, opts)


def _with_outputs(result: RunResult, opts: RunOptions) -> RunResult:
    """The summary files and the terminal table of the samples kept, and the paired gate's CI outputs."""
    records = result.records()
    if records:
        from ctxprobe.evals.report.summary import write_report

        result.table = write_report(records, result.run_dir, result.manifest)
    if result.manifest.paired_gate is not None:
        from ctxprobe.evals.run.against import gate_cases
        from ctxprobe.evals.sequential.ci_outputs import write_ci_outputs

        cases = gate_cases(result.manifest.paired_gate, opts.label or result.run_dir.name)
        result.written = write_ci_outputs(cases, "ctxprobe paired gate", opts.junit, opts.summary_md)
    return result


def _run_in(store: RunStore, opts: RunOptions, suite: Suite, previous: RunManifest | None,
            on_progress: Callable[[Progress], None] | None, free_reserve: Callable[[], None]) -> RunResult:
    with _sigterm_as_interrupt(), serving(opts, suite) as served, contextlib.ExitStack() as stack:
        builder = builder_for(served.counter)
        rule = stop_rule(opts, suite)
        paired = lockstep = None
        if opts.against:
            from ctxprobe.evals.run.against import paired_run

            extend = None
            if opts.baseline_endpoint:
                from ctxprobe.evals.run.lockstep import extension_recipes

                cap = rule.cap(suite.samples)
                extend = lambda base: extension_recipes(base, cap, builder.recipe_tokenizer)  # noqa: E731
            paired = paired_run(opts.against, opts.fail_if_drop or 0.0, 0.05, builder.tokenizer, extend)
            recipes = paired.recipes
            if paired.extension:
                lockstep = _open_lockstep(stack, opts, suite, served, store, paired)
        else:
            recipes = capped_suite(suite, rule).recipes(builder.recipe_tokenizer, mode=opts.mode,
                                                        default_mode=served.default_mode)
        budget = preflight(opts, suite, served, recipes)
        done = check_resumable(store, recipes, budget) if previous else {}
        todo = [r for r in recipes if r.sample_id() not in done]
        manifest = _manifest(opts, suite, served, builder.tokenizer, previous, len(recipes))
        if rule.stop == "decided":
            manifest.stop = rule.model_dump()
            manifest.fixed_grid_prompt_tokens = fixed_grid_tokens(suite)
        elif paired is not None:  # the fixed alternative: the candidate sent every sample the baseline pairs with
            manifest.fixed_grid_prompt_tokens = sum(r.context_tokens for r in recipes)
        fresh = previous is None
        store.write_manifest(manifest)
        print(f"ctxprobe: {len(todo)} samples to run ({len(done)} already done) -> {store.dir}", file=sys.stderr)
        progress = Progress(total=len(todo))
        lost_detail: str | None = None
        write_failed: WriteFailed | None = None
        engine_name = served.engine.engine
        metrics_before = engine_metrics.scrape(served.config, engine_name)
        try:
            if paired is not None:
                asyncio.run(_send_paired(paired, served, store, opts.order, progress, on_progress, budget,
                                         lockstep))
            elif rule.stop == "decided":
                asyncio.run(_send_rounds(recipes, rule, served, store, opts.order, progress, on_progress, budget))
            else:
                asyncio.run(_send(todo, served, store, opts.order, progress, on_progress, budget))
            manifest.status = "finished"
        except EndpointLost as lost:
            manifest.status = "endpoint_lost"
            lost_detail = lost.detail
        except WriteFailed as failed:  # disk full, read-only: stop, keep every line written so far
            manifest.status, manifest.status_detail = "failed", str(failed)
            write_failed = failed
        except KeyboardInterrupt:
            manifest.status = "interrupted"
        except BaseException:
            manifest.status = "failed"
            raise
        finally:
            store.close()
            latest = store.latest_records()
            manifest.cache = cache_use(list(latest.values()))
            if metrics_before is not None and manifest.status != "endpoint_lost":  # a gone server: no wait
                manifest.engine_metrics = engine_metrics.deltas(metrics_before,
                                                                engine_metrics.scrape(served.config, engine_name))
            manifest.samples_done = sum(1 for r in latest.values() if r.error is None)
            manifest.samples_errored = sum(1 for r in latest.values() if r.error is not None)
            manifest.prompt_tokens_sent = sum(r.sample.planned_tokens for r in latest.values())
            if paired is not None:
                from ctxprobe.evals.run.against import gate_report, update

                if lockstep is not None:
                    _close_lockstep(lockstep, paired, manifest.status)
                update(paired, list(latest.values()))
                manifest.paired_gate = gate_report(paired)
            elif rule.stop == "decided":
                manifest.stopped_cells = stop_summary(latest.values(), rule, cell_caps(recipes))
            manifest.samples_count_off = sum(1 for r in latest.values() if r.prompt_tokens_off is not None)
            manifest.updated = time.time()
            if fresh and not latest and not progress.sent and manifest.status != "finished":
                _drop_unsent(store)  # nothing was sent: leave no empty run folder behind
            else:
                if write_failed is not None:
                    free_reserve()  # a full disk: the space kept for this manifest
                try:
                    store.write_manifest(manifest)
                except WriteFailed as failed:  # the status cannot be written either: say why in the ending
                    write_failed = write_failed or failed
    if write_failed is not None:
        return _write_failed(store, manifest, progress, write_failed)
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
            warnings.warn(f"report.html not written: {failed}", stacklevel=2)
    return _ending(store, manifest, progress, opts, lost_detail)


def _write_failed(store: RunStore, manifest: RunManifest, progress: Progress, failed: WriteFailed) -> RunResult:
    planned = manifest.samples_planned or 0
    done, errored = manifest.samples_done or 0, manifest.samples_errored or 0
    msg = (f"{failed}; the run stopped: {done} samples done and {errored} errored are kept in {store.dir}, "
           f"{planned - done - errored} not sent. Make room (or copy the folder where there is some) and run "
           f"ctxprobe run --resume FOLDER")
    return RunResult(store.dir, manifest, progress, ExitCode.WRITE_FAILED, msg)


def _ending(store: RunStore, manifest: RunManifest, progress: Progress, opts: RunOptions,
            lost_detail: str | None) -> RunResult:
    planned = manifest.samples_planned or 0
    done, errored = manifest.samples_done or 0, manifest.samples_errored or 0
    resume = f"ctxprobe run --resume {store.dir}"
    counts = _left_counts(planned - done - errored, progress)
    off = (f"; {manifest.samples_count_off} samples served at another length than planned (see the table)"
           if manifest.samples_count_off else "")
    if manifest.status == "endpoint_lost":
        msg = (f"the endpoint stopped serving ({lost_detail}); {done} samples done, {errored} errored, {counts}. "
               f"When it is back: {resume}" + (" --endpoint URL if it moved" if opts.endpoints else ""))
        return RunResult(store.dir, manifest, progress, ExitCode.ENDPOINT_LOST, msg + off)
    if manifest.status == "interrupted":
        where = f"; continue with: {resume}" if store.dir.exists() else " before anything was sent"
        msg = f"interrupted: {done} samples done, {errored} errored, {counts}{where}"
        return RunResult(store.dir, manifest, progress, ExitCode.INTERRUPTED, msg + off)
    gate = manifest.paired_gate
    if gate is not None:
        verdict = gate["verdict"]
        if verdict == "UNDECIDED" and opts.undecided != "exit":
            verdict = opts.undecided.upper()
        code = {"FAIL": ExitCode.SAMPLE_ERRORS, "PASS": ExitCode.OK, "UNDECIDED": ExitCode.UNDECIDED}[verdict]
        used = sum(e["n"] for e in gate["rows"] if e["primary"])
        held = sum(e["baseline_samples"] for e in gate["rows"] if e["primary"])
        msg = f"paired gate against {gate['baseline']}: {gate['verdict']} ({used} pairs of {held} the baseline holds; {errored} errored)"
        return RunResult(store.dir, manifest, progress, code, msg + off)
    if errored and not opts.allow_errors:
        cut = sum(1 for r in store.latest_records().values() if r.error is ErrorKind.truncated)
        again = f"`{resume}` sends them again"
        if cut:
            again += f" ({cut} truncated at the answer budget: resume with a larger --answer-tokens)"
        msg = f"{errored} samples ended in errors (see samples.jsonl; --allow-errors accepts them); {again}"
        return RunResult(store.dir, manifest, progress, ExitCode.SAMPLE_ERRORS, msg + off)
    return RunResult(store.dir, manifest, progress, ExitCode.OK, f"{done} samples scored, {errored} errored" + off)


def _left_counts(left: int, progress: Progress) -> str:
    """The samples without a record: those sent whose answer never came (sent again on resume), the rest."""
    out = min(progress.in_flight, left)
    return f"{out} in flight (sent, no answer kept), {left - out} not sent" if out else f"{left} not sent"


def cache_use(records: list[SampleRecord]) -> dict[str, float] | None:
    """How much of the prompt tokens the server said came from its prefix cache, and the prefill seconds that
    saved at the run's own prefill rate (uncached tokens per second of time to first token)."""
    seen = [r.response for r in records if r.response is not None and r.response.cached_tokens is not None
            and r.response.prompt_tokens]
    if not seen:
        return None
    prompt = sum(r.prompt_tokens or 0 for r in seen)
    cached = sum(r.cached_tokens or 0 for r in seen)
    timed = [r for r in seen if r.ttft_s or r.latency_s]  # time to first token; the whole latency unstreamed
    fresh_s = sum(r.ttft_s or r.latency_s for r in timed)
    rate = sum((r.prompt_tokens or 0) - (r.cached_tokens or 0) for r in timed) / fresh_s if fresh_s else None
    use: dict[str, float] = {"prompt_tokens": prompt, "cached_tokens": cached, "cached_share": cached / prompt}
    if rate:
        use.update(prefill_tokens_per_s=rate, prefill_s_saved=cached / rate)
    return use


def check_resumable(store: RunStore, recipes: list[Recipe], budget: AnswerBudget | None = None
                    ) -> dict[str, SampleRecord]:
    """The finished samples to keep: the scored ones, and the truncated ones unless `budget` now gives them
    more room (a truncated answer sent again with the same budget is cut again). Every finished sample
    must still be in the plan: if it isn't, the plan changed (another tokenizer, generator or suite), and
    resuming is refused with one line naming the first difference. Nothing is ever dropped from samples.jsonl."""
    planned = {r.sample_id(): r for r in recipes}
    by_task = {r.task_key(): r for r in recipes}
    latest = store.latest_records()
    for sid, record in latest.items():
        if sid not in planned:
            old = record.sample.recipe
            now = by_task.get(old.task_key())
            if now is not None:
                diff = first_difference(old.model_dump(mode="json"), now.model_dump(mode="json"))
            else:
                diff = "it is no longer in the suite (suite, lengths, depths or generator version changed)"
            raise UserError(f"cannot resume {store.dir}: sample {sid} was planned differently: {diff}; "
                            "start a new run (finished samples are kept as they are)")
    return {sid: r for sid, r in latest.items() if r.error is None or (
        r.error is ErrorKind.truncated and budget is not None and not budget.raised_for(r))}


def first_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return f"{key} {old.get(key)!r} then, {new.get(key)!r} now"
    return "no field differs"


# Options a resume may change: where and how to reach the endpoint (not the mode, which is part of the plan)
# and how the run reports. What to run always comes from the run.
def _manifest(opts: RunOptions, suite: Suite, served: Served, tokenizer: str, previous: RunManifest | None,
              planned: int) -> RunManifest:
    base = previous.model_dump() if previous is not None else {"created": time.time()}
    base.update(
        schema_version=RunManifest.model_fields["schema_version"].default, command="run",
        ctxprobe_version=ctxprobe_version(), status="running", updated=time.time(), label=opts.label,
        endpoints=[public_url(u) for u in served.config.base_urls], model=served.model,
        engine=served.engine, mode=served.mode, suite=suite,
        seeds=sorted({suite.seed + i for i in range(max(t.samples or suite.samples for t in suite.tasks))}),
        tokenizer=tokenizer, token_counter=served.counter_spec, api_key_env=opts.api_key_env,
        options=saved_options(opts), samples_planned=planned,
    )
    return RunManifest.model_validate(base)


async def _send_rounds(recipes: list[Recipe], rule: StopRule, served: Served, store: RunStore, order: Order,
                       progress: Progress, on_progress: Callable[[Progress], None] | None,
                       budget: AnswerBudget) -> None:
    """`--stop decided`: send round after round (`rounds.next_round`) until every cell is decided or capped."""
    caps, sent = cell_caps(recipes), set[str]()
    while batch := next_round(recipes, store.latest_records().values(), rule, caps, sent):
        sent.update(r.sample_id() for r in batch)
        await _send(batch, served, store, order, progress, on_progress, budget)


async def _send_paired(paired: Any, served: Served, store: RunStore, order: Order, progress: Progress,
                       on_progress: Callable[[Progress], None] | None, budget: AnswerBudget,
                       lockstep: "_Lockstep | None" = None) -> None:
    """`--against`: send the baseline's samples round after round until every family is decided or used up;
    with `--baseline-endpoint`, a round's samples the baseline lacks go to both endpoints at once."""
    from ctxprobe.evals.run.against import next_paired_round
    from ctxprobe.evals.run.lockstep import missing_on_baseline, scored

    sent = set[str]()
    while True:
        if lockstep is not None:
            paired.add_baseline(scored(lockstep.store.latest_records().values()))
        batch = next_paired_round(paired, list(store.latest_records().values()), sent)
        if not batch:
            return
        sent.update(r.sample_id() for r in batch)
        sends = [_send(batch, served, store, order, progress, on_progress, budget)]
        if lockstep is not None and (missing := missing_on_baseline(batch, paired.extension, lockstep.store)):
            lockstep.progress.total += len(missing)
            sends.append(_send(missing, lockstep.served, lockstep.store, order, lockstep.progress, None, budget))
        await asyncio.gather(*sends)


@dataclass
class _Lockstep:
    """The baseline endpoint's side of a lockstep paired run: where it is served, its run folder."""

    served: Served
    store: RunStore
    manifest: RunManifest
    progress: Progress


def _open_lockstep(stack: contextlib.ExitStack, opts: RunOptions, suite: Suite, served: Served, store: RunStore,
                   paired: Any) -> _Lockstep:
    """Serve `--baseline-endpoint` (prompts built with the candidate's counter: the same text and ids) and
    open the extension's run folder, its manifest written as running."""
    from ctxprobe.evals.run.lockstep import baseline_options, extension_store

    base_opts = baseline_options(opts)
    base_served = stack.enter_context(serving(base_opts, suite))
    base_served = dataclasses.replace(base_served, counter=served.counter)
    ext = extension_store(store.dir)
    ext.dir.mkdir(exist_ok=True)
    earlier = ext.load_manifest() if (ext.dir / "manifest.json").is_file() else None
    manifest = _manifest(base_opts.model_copy(update={"label": f"{opts.label}-baseline-extension",
                                                      "against": None}),
                         suite, base_served, paired.baseline.manifest.tokenizer, earlier, len(paired.extension))
    ext.write_manifest(manifest)
    stack.callback(ext.close)
    return _Lockstep(base_served, ext, manifest, Progress(total=0))


def _close_lockstep(lockstep: _Lockstep, paired: Any, status: str) -> None:
    """The extension's manifest, final: how many samples it holds, its status the run's."""
    from ctxprobe.evals.run.lockstep import scored

    lockstep.store.close()
    latest = lockstep.store.latest_records()
    paired.add_baseline(scored(latest.values()))
    manifest = lockstep.manifest
    manifest.status = status
    manifest.samples_done = sum(1 for r in latest.values() if r.error is None)
    manifest.samples_errored = sum(1 for r in latest.values() if r.error is not None)
    manifest.prompt_tokens_sent = sum(r.sample.planned_tokens for r in latest.values())
    manifest.updated = time.time()
    lockstep.store.write_manifest(manifest)


async def _send(recipes: list[Recipe], served: Served, store: RunStore, order: Order, progress: Progress,
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
    for mode in dict.fromkeys(r.mode for r in recipes):
        group = [r for r in recipes if r.mode == mode]
        config = served.config.model_copy(update={"mode": mode})
        async with EndpointClient(config) as client:
            await run_recipes(group, client, store, concurrency=config.concurrency, counter=served.counter,
                              order=order, on_record=show, still_there=still_there, progress=progress,
                              budget=budget, context_length=served.engine.context_length)


def _remove_if_empty(store: RunStore) -> None:
    """Remove a folder this run made that holds nothing but its lock file (bad input found late)."""
    with contextlib.suppress(OSError):
        if {p.name for p in store.dir.iterdir()} <= {LOCK, RESERVE}:
            (store.dir / LOCK).unlink(missing_ok=True)
            store.dir.rmdir()


def _drop_unsent(store: RunStore) -> None:
    """Remove what a run that sent nothing wrote into its new folder (its manifest, an empty samples file);
    the folder itself goes once the lock is released (`_remove_if_empty`)."""
    for name in ("manifest.json", "samples.jsonl"):
        path = store.dir / name
        if path.exists() and (name == "manifest.json" or path.stat().st_size == 0):
            path.unlink()


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While a run is under way, SIGTERM (what schedulers and CI runners send) stops it exactly as Ctrl-C
    does: the SIGINT handler in force runs (asyncio's cancels the sends cleanly, Python's raises
    KeyboardInterrupt), or KeyboardInterrupt is raised where SIGINT is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
