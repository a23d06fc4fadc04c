"""Everything a run checks before it starts an engine or reaches an endpoint: its options, its suite (every
family, parameter, haystack and length), the run folder it resumes or the results folder it will make.

It imports no HTTP client, no data frame library and no engine, so that bad input ends in one line within a
fraction of a second: `ctxprobe run` calls it before it loads the rest of the run, and `ctxprobe.run`
starts with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.store import RunStore, run_folder
from ctxprobe.evals.run.send.inline_suite import suite_for
from ctxprobe.evals.run.send.options import EndpointOptions, RunOptions, validated
from ctxprobe.evals.run.rounds import stop_rule
from ctxprobe.evals.scoring.score import check_answer_kinds
from ctxprobe.runners.launchers import launcher_for
from ctxprobe.runners.settings import part
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.family_index import include
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import check_counter_spec

# What `--resume RUN` may give again: how to reach the endpoint (a moved server), the answer budgets (a
# raised one sends the truncated samples again) and the judge, never what to run.
RESUME_OVERRIDES = (set(EndpointOptions.model_fields) - {"mode"}) | {"quiet", "allow_errors", "no_report",
                                                                     "answer_tokens", "reasoning_tokens", "baseline_endpoint",
                                                                     "judge_endpoint", "judge_model"}


@dataclass(frozen=True)
class PreparedRun:
    """A run's checked plan: the options it runs with (a resumed run's saved ones), its suite, its store,
    and the manifest it resumes (None for a new run)."""

    options: RunOptions
    suite: Suite
    store: RunStore
    previous: RunManifest | None


def prepare_run(opts: RunOptions) -> PreparedRun:
    """Check a run's input; bad input raises `UserError` before any folder is made."""
    check_counter_spec(opts.token_counter)
    if not opts.endpoints:  # the engine ctxprobe starts: its launcher's input, before anything is made
        chosen = launcher_for(opts.engine)
        chosen.check(part(opts, chosen.settings))
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
        return PreparedRun(resumed, previous.suite, store, previous)
    if opts.against:  # a paired run: the baseline's samples, nothing else
        from ctxprobe.evals.run.lockstep import check_lockstep

        check_lockstep(opts)
        from ctxprobe.evals.records.load import load_run

        suite = load_run(opts.against).manifest.suite
    else:
        suite = suite_for(opts)
        check_answer_kinds(suite.check())
    stop_rule(opts, suite)  # a bad stop rule is one line before anything starts
    return PreparedRun(opts, suite, RunStore(run_folder(Path(opts.results_dir), opts.label)), None)


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
