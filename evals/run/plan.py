"""A run's plan: its options resolved once, before an engine starts or an endpoint is reached, into what the
run executes: the suite (every family, parameter, haystack and length checked), the run folder it resumes
or the results folder it will make, its stopping rule and its strategy (`kind`: a fixed grid, `--stop
decided`'s rounds, or `--against`'s paired rounds, see `evals.run.strategy`), the order of its requests and
the requests in flight where they are known before the endpoint answers (`evals.run.send.concurrency`).

`resolve` owns these decisions: `ctxprobe.run`, `ctxprobe run` and `--dry-run` all start from it, so a dry run
prints the plan the run executes. It imports no HTTP client, no data frame library and no engine, so that
bad input ends in one line within a fraction of a second."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.store import RunStore, run_folder
from ctxprobe.evals.run.send.inline_suite import suite_for
from ctxprobe.evals.run.send.options import EndpointOptions, RunOptions, validated
from ctxprobe.evals.compare.sequential.cells import StopRule
from ctxprobe.evals.run.rounds import stop_rule
from ctxprobe.evals.run.send.order import Order
from ctxprobe.evals.scoring.score import check_answer_kinds
from ctxprobe.runners.launcher import check_gguf
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.family_index import include
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import check_counter_spec

# What `--resume RUN` may give again: how to reach the endpoint (a moved server), the answer budgets (a
# raised one sends the truncated samples again) and the judge, never what to run.
RESUME_OVERRIDES = (set(EndpointOptions.model_fields) - {"mode"}) | {"quiet", "allow_errors", "no_report",
                                                                     "answer_tokens", "reasoning_tokens", "baseline_endpoint",
                                                                     "judge_endpoint", "judge_model"}


Kind = Literal["fixed", "sequential", "paired"]


@dataclass(frozen=True)
class RunPlan:
    """A run's checked plan: the options it runs with (a resumed run's saved ones: what the manifest records),
    its suite, its store, the manifest it resumes (None for a new run), its stopping rule and kind."""

    options: RunOptions
    suite: Suite
    store: RunStore
    previous: RunManifest | None
    rule: StopRule

    @property
    def kind(self) -> Kind:
        """paired (`--against`), sequential (`--stop decided`) or fixed: the one place that says which."""
        if self.options.against:
            return "paired"
        return "sequential" if self.rule.stop == "decided" else "fixed"

    @property
    def order(self) -> Order:
        return self.options.order


def resolve(opts: RunOptions) -> RunPlan:
    """Check a run's input and resolve its plan; bad input raises `UserError` before any folder is made."""
    check_counter_spec(opts.token_counter)
    if opts.model_file and not opts.endpoints:
        check_gguf(Path(opts.model_file))
    if opts.baseline_endpoint and not opts.against and not opts.resume:
        from ctxprobe.evals.run.lockstep import check_lockstep

        check_lockstep(opts)
    if opts.resume:
        store = RunStore(Path(opts.resume))
        previous = store.load_manifest()
        assert previous is not None
        resumed = resumed_options(opts, previous)
        for path in resumed.include:  # the run's own families and answer kinds
            include(path)
        return RunPlan(resumed, previous.suite, store, previous, stop_rule(resumed, previous.suite))
    if opts.against:  # a paired run: the baseline's samples, nothing else
        from ctxprobe.evals.run.lockstep import check_lockstep

        check_lockstep(opts)
        from ctxprobe.evals.records.load import load_run

        suite = load_run(opts.against).manifest.suite
    else:
        suite = suite_for(opts)
        check_answer_kinds(suite.check())
    rule = stop_rule(opts, suite)  # a bad stop rule is one line before anything starts
    return RunPlan(opts, suite, RunStore(run_folder(Path(opts.results_dir), opts.label)), None, rule)


def resumed_options(given: RunOptions, previous: RunManifest) -> RunOptions:
    """The saved options, with the endpoint options given again on the command line taking over
    (e.g. `--resume RUN --endpoint URL` for a moved server). What to run always comes from the run."""
    saved = dict(previous.options)
    changed = [key for key in sorted(given.model_fields_set - RESUME_OVERRIDES - {"resume"})
               if given.model_dump(mode="json", include={key})[key] != saved.get(key)]
    if changed:
        flags = ", ".join("--" + key.replace("_", "-") for key in changed)
        raise UserError(f"--resume continues the run as it was planned; {flags} would change it: start a new run "
                        "for another plan (only how to reach the endpoint, the answer budgets, the judge and the "
                        "output may be given again)")
    for key in RESUME_OVERRIDES:
        value = getattr(given, key)
        if key in given.model_fields_set and value not in (None, []):
            saved[key] = value
    saved["resume"] = given.resume
    return validated(RunOptions, {k: v for k, v in saved.items() if k in RunOptions.model_fields})
