"""ctxprobe: long-context recall evaluation for OpenAI-compatible endpoints.

The library API that nightly jobs and the `ctxprobe` command line both call:

    import ctxprobe
    result = ctxprobe.run(suite="quick", label="q4km")          # or ctxprobe.run(ctxprobe.RunOptions(...))
    run = ctxprobe.load_run(result.run_dir)
    run.frame()                                                  # one row per sample (pandas)

Extension points: `@ctxprobe.task_family("name", version="1")` registers a task family (`get_family`,
`known_families` look them up; what a family implements: `ctxprobe.tasks.family`, whose `Draft`,
`NeedleDraft`, `Expected`, `frame` and `DataBacked` are here too), `@ctxprobe.answer_kind("kind")` registers
the scorer of an answer kind (`Score`, `AnswerRegion`), `ctxprobe.Suite` is a suite in code,
`ctxprobe.EngineAdapter` is the base of an engine adapter, `@ctxprobe.launcher` registers a
`ctxprobe.Launcher`, an engine ctxprobe starts (`--engine NAME`; what it is asked: `ctxprobe.Launch`).
Families outside the package load through a `ctxprobe.families` entry point or `ctxprobe run --include PATH`,
launchers through a `ctxprobe.launchers` entry point.

Heavy modules load on first use, so `import ctxprobe` stays cheap; the `TYPE_CHECKING` block below names
the same objects for type checkers (a test keeps it and `__all__` the same).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxprobe.evals.compare.api import CompareResult
    from ctxprobe.evals.compare.history import HistoryResult, history
    from ctxprobe.evals.doctor.checks import DoctorReport, doctor
    from ctxprobe.evals.limit.api import limit
    from ctxprobe.evals.limit.options import LimitOptions
    from ctxprobe.evals.lmeval.api import export_hf, export_lm_eval, import_lm_eval
    from ctxprobe.evals.plan.api import plan
    from ctxprobe.evals.records.load import Run, load_run
    from ctxprobe.evals.records.manifest import RunManifest
    from ctxprobe.evals.records.record import SampleRecord
    from ctxprobe.evals.report.pages import compare, report
    from ctxprobe.evals.run.api import ExitCode, RunResult, run
    from ctxprobe.evals.run.estimate import Estimate, estimate
    from ctxprobe.evals.run.send.options import RunOptions
    from ctxprobe.runners.engines.base import EngineAdapter
    from ctxprobe.runners.launchers.base import Launch, Launcher, launcher
    from ctxprobe.tasks.answers.kinds import answer_kind
    from ctxprobe.tasks.answers.region import AnswerRegion
    from ctxprobe.tasks.answers.verdict import Score
    from ctxprobe.tasks.errors import UserError
    from ctxprobe.tasks.family import DataBacked, Draft, Expected, NeedleDraft, frame
    from ctxprobe.tasks.registry import get_family, known_families, task_family
    from ctxprobe.tasks.suite import Suite

# name -> module that defines it (imported on first attribute access)
_API: dict[str, str] = {
    "run": "ctxprobe.evals.run.api",
    "RunOptions": "ctxprobe.evals.run.send.options",
    "RunResult": "ctxprobe.evals.run.api",
    "ExitCode": "ctxprobe.evals.run.api",
    "estimate": "ctxprobe.evals.run.estimate",
    "Estimate": "ctxprobe.evals.run.estimate",
    "load_run": "ctxprobe.evals.records.load",
    "Run": "ctxprobe.evals.records.load",
    "RunManifest": "ctxprobe.evals.records.manifest",
    "SampleRecord": "ctxprobe.evals.records.record",
    "limit": "ctxprobe.evals.limit.api",
    "LimitOptions": "ctxprobe.evals.limit.options",
    "plan": "ctxprobe.evals.plan.api",
    "compare": "ctxprobe.evals.report.pages",
    "CompareResult": "ctxprobe.evals.compare.api",
    "history": "ctxprobe.evals.compare.history",
    "HistoryResult": "ctxprobe.evals.compare.history",
    "report": "ctxprobe.evals.report.pages",
    "doctor": "ctxprobe.evals.doctor.checks",
    "DoctorReport": "ctxprobe.evals.doctor.checks",
    "UserError": "ctxprobe.tasks.errors",
    "export_lm_eval": "ctxprobe.evals.lmeval.api",
    "export_hf": "ctxprobe.evals.lmeval.api",
    "import_lm_eval": "ctxprobe.evals.lmeval.api",
    "task_family": "ctxprobe.tasks.registry",
    "get_family": "ctxprobe.tasks.registry",
    "known_families": "ctxprobe.tasks.registry",
    "Suite": "ctxprobe.tasks.suite",
    "answer_kind": "ctxprobe.tasks.answers.kinds",
    "Score": "ctxprobe.tasks.answers.verdict",
    "AnswerRegion": "ctxprobe.tasks.answers.region",
    "Draft": "ctxprobe.tasks.family",
    "NeedleDraft": "ctxprobe.tasks.family",
    "Expected": "ctxprobe.tasks.family",
    "DataBacked": "ctxprobe.tasks.family",
    "frame": "ctxprobe.tasks.family",
    "EngineAdapter": "ctxprobe.runners.engines.base",
    "Launcher": "ctxprobe.runners.launchers.base",
    "Launch": "ctxprobe.runners.launchers.base",
    "launcher": "ctxprobe.runners.launchers.base",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxprobe' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
