"""A run's plan: its options resolved once, before an engine starts or an endpoint is reached, into what the
run executes: the suite (every family, parameter, haystack and length checked), the run folder it resumes
or the results folder it will make, its stopping rule and its strategy (`kind`: a fixed grid, `--stop
decided`'s rounds, or `--against`'s paired rounds, see `evals.run.strategy`), the order of its requests and
the requests in flight where they are known before the endpoint answers (`evals.run.send.concurrency`).

`resolve` owns these decisions: `ctxprobe.run`, `ctxprobe run` and `--dry-run` all start from it, so a dry run
prints the plan the run executes. It imports no HTTP client, no data frame library and no engine, so that
bad input ends in one line within a fraction of a second."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ctxprobe.evals.compare.sequential.cells import StopRule
from ctxprobe.evals.records.manifest import RunManifest, saved_options
from ctxprobe.evals.records.safe_write import check_output_target
from ctxprobe.evals.records.store import RunStore, run_folder
from ctxprobe.evals.run.rounds import stop_rule
from ctxprobe.evals.run.send.inline_suite import suite_for
from ctxprobe.evals.run.send.options import (
    AgainstOptions,
    DryRunOptions,
    EndpointOptions,
    JudgeOptions,
    OutputOptions,
    RunOptions,
    validated,
)
from ctxprobe.evals.run.send.order import Order
from ctxprobe.evals.scoring.score import check_answer_kinds
from ctxprobe.runners.launchers import launcher_for
from ctxprobe.runners.settings import LogprobSettings
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.family_index import include
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import check_counter_spec

# What `--resume RUN` may give again: how to reach the endpoint (a moved server), the answer budgets (a
# raised one sends the truncated samples again) and the judge, never what to run.
RESUME_OVERRIDES = (set(EndpointOptions.flat_fields()) - {"mode"}) | {
    "quiet",
    "allow_errors",
    "no_report",
    "answer_tokens",
    "reasoning_tokens",
    "baseline_endpoint",
    "judge_endpoint",
    "judge_model",
    "prefill_rate",
    "probe_up_to",
}


Kind = Literal["fixed", "sequential", "paired"]


@dataclass(frozen=True)
class Budgets:
    """The answer budgets given (None: the family's, and the reasoning room the endpoint's model needs)."""

    answer_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True)
class RunPlan:
    """A run's checked plan, each part for the code that uses it: what to run (suite, stopping rule, kind,
    order, the mode asked for), where (the endpoint's options and the answers' log-probabilities), the
    budgets, the outputs, a paired run's baseline and gate (`against`, None otherwise), the optional judge;
    its store, the manifest it resumes (None for a new run), the options as the manifest records them, and
    what `--dry-run` reads beside them (`cost`): a dry run is estimated from the plan alone."""

    suite: Suite
    rule: StopRule
    kind: Kind
    order: Order
    mode: Mode | None
    endpoint: EndpointOptions
    logprobs: LogprobSettings
    budgets: Budgets
    outputs: OutputOptions
    against: AgainstOptions | None
    judge: JudgeOptions | None
    store: RunStore
    previous: RunManifest | None
    recorded: dict[str, Any]
    prefill_rate: float | None = None  # --prefill-rate (what --dry-run measured): the deadlines' rate until measured
    cache_check: str | None = None  # --cache-check, else the suite's: auto, off, a share; None: the layout's default
    cache_check_stated: str = ""  # where that was stated, in words (`stated_control`); "" for the layout's default
    model_config: str | None = None  # --config: the model's config.json, folder or GGUF (the deployment lint's)
    cost: DryRunOptions = field(default_factory=DryRunOptions)  # --dry-run's own (prefill rate, probe, config, GPUs)


def kind_of(opts: RunOptions, rule: StopRule) -> Kind:
    """paired (`--against`), sequential (`--stop decided`) or fixed: the one place that says which."""
    if opts.gate.against:
        return "paired"
    return "sequential" if rule.stop == "decided" else "fixed"


def _plan(opts: RunOptions, suite: Suite, store: RunStore, previous: RunManifest | None) -> RunPlan:
    """The options, cut into the parts the run hands on."""
    rule = stop_rule(opts.stopping, suite)  # a bad stop rule is one line before anything starts
    cache_check, cache_check_stated = stated_control(opts.cache_check, suite)
    kind = kind_of(opts, rule)
    for flag, target in (("--junit", opts.gate.junit), ("--summary-md", opts.gate.summary_md)):
        if target:  # refused now, not after the whole run
            check_output_target(target, flag)
    return RunPlan(
        suite=suite,
        rule=rule,
        kind=kind,
        order=opts.order,
        mode=opts.endpoint.mode,
        endpoint=opts.endpoint,
        logprobs=opts.probabilities,
        budgets=Budgets(answer_tokens=opts.answer_tokens, reasoning_tokens=opts.reasoning_tokens),
        outputs=opts.outputs,
        against=opts.gate if kind == "paired" else None,
        judge=opts.judge if opts.judge.judge_endpoint else None,
        store=store,
        previous=previous,
        recorded=saved_options(opts.flat()),
        prefill_rate=opts.cost.prefill_rate,
        cache_check=cache_check,
        cache_check_stated=cache_check_stated,
        model_config=opts.cost.config,
        cost=opts.cost,
    )


def stated_control(flag: str | None, suite: Suite) -> tuple[str | None, str]:
    """The cache-path control a run states and where, in words: `--cache-check` overrides the suite's
    `cache_check:`; (None, "") where neither states it (evals.run.cache_check.asked picks the layout's default)."""
    if flag is not None:
        return flag, f"--cache-check {flag}"
    if suite.cache_check is not None:
        return suite.cache_check, f"cache_check: {suite.cache_check} in suite {suite.name}"
    return None, ""


def resolve(opts: RunOptions) -> RunPlan:
    """Check a run's input and resolve its plan; bad input raises `UserError` before any folder is made."""
    endpoint, gate, resume = opts.endpoint, opts.gate, opts.outputs.resume
    check_counter_spec(endpoint.token_counter)
    if opts.cost.config:  # the deployment lint's model config: a bad one is one line before anything starts
        from ctxprobe.runners.model_facts import read_model_facts

        read_model_facts(Path(opts.cost.config))
    if not endpoint.endpoints:  # the engine ctxprobe starts: its launcher's input, before anything is made
        launcher_for(endpoint.engine).check(endpoint.launcher)
    if gate.baseline_endpoint and not gate.against and not resume:
        from ctxprobe.evals.run.lockstep import check_lockstep

        check_lockstep(opts)
    if resume:
        store = RunStore(Path(resume))
        previous = store.load_manifest()
        assert previous is not None
        resumed = resumed_options(opts, previous)
        for path in resumed.grid.include:  # the run's own families and answer kinds
            include(path)
        return _plan(resumed, previous.suite, store, previous)
    if gate.against:  # a paired run: the baseline's samples, nothing else
        from ctxprobe.evals.compare.metrics import metric
        from ctxprobe.evals.run.lockstep import check_lockstep

        check_lockstep(opts)
        metric(gate.metric)  # an unknown gate metric is one line naming the known ones
        from ctxprobe.evals.records.load import load_run

        suite = load_run(gate.against).manifest.suite
    else:
        suite = suite_for(opts.grid)
        check_answer_kinds(suite.check())
    return _plan(opts, suite, RunStore(run_folder(Path(opts.outputs.results_dir), opts.outputs.label)), None)


def resumed_options(given: RunOptions, previous: RunManifest) -> RunOptions:
    """The saved options, with the endpoint options given again on the command line taking over
    (e.g. `--resume RUN --endpoint URL` for a moved server). What to run always comes from the run."""
    saved = dict(previous.options)  # by the options' flat names, in every version of the manifest
    now, named = given.flat(), given.given()
    changed = [key for key in sorted(named - RESUME_OVERRIDES - {"resume"}) if now[key] != saved.get(key)]
    if changed:
        flags = ", ".join("--" + key.replace("_", "-") for key in changed)
        raise UserError(
            f"--resume continues the run as it was planned; {flags} would change it: start a new run "
            "for another plan (only how to reach the endpoint, the answer budgets, the judge and the "
            "output may be given again)"
        )
    for key in RESUME_OVERRIDES & named:
        if now[key] not in (None, []):
            saved[key] = now[key]
    saved["resume"] = given.outputs.resume
    known = RunOptions.flat_fields()
    return validated(RunOptions, {k: v for k, v in saved.items() if k in known})
