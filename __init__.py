"""ctxprobe: long-context recall evaluation for OpenAI-compatible endpoints.

The library API that nightly jobs and the `ctxprobe` command line both call:

    import ctxprobe
    result = ctxprobe.run(suite="quick", label="q4km")          # or ctxprobe.run(ctxprobe.RunOptions(...))
    run = ctxprobe.load_run(result.run_dir)
    run.frame()                                                  # one row per sample (pandas)

Heavy modules load on first use, so `import ctxprobe` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it (imported on first attribute access)
_API: dict[str, str] = {
    "run": "ctxprobe.evals.run.api",
    "RunOptions": "ctxprobe.evals.run.options",
    "RunResult": "ctxprobe.evals.run.api",
    "ExitCode": "ctxprobe.evals.run.api",
    "estimate": "ctxprobe.evals.run.estimate",
    "Estimate": "ctxprobe.evals.run.estimate",
    "load_run": "ctxprobe.evals.log.load",
    "Run": "ctxprobe.evals.log.load",
    "RunManifest": "ctxprobe.evals.log.manifest",
    "SampleRecord": "ctxprobe.evals.log.record",
    "limit": "ctxprobe.evals.limit.api",
    "LimitOptions": "ctxprobe.evals.limit.options",
    "plan": "ctxprobe.evals.plan.api",
    "compare": "ctxprobe.evals.compare.api",
    "CompareResult": "ctxprobe.evals.compare.api",
    "history": "ctxprobe.evals.compare.history",
    "HistoryResult": "ctxprobe.evals.compare.history",
    "report": "ctxprobe.evals.pages",
    "doctor": "ctxprobe.evals.doctor.checks",
    "DoctorReport": "ctxprobe.evals.doctor.checks",
    "UserError": "ctxprobe.tasks.errors",
    "export_lm_eval": "ctxprobe.evals.lmeval.api",
    "export_hf": "ctxprobe.evals.lmeval.api",
    "import_lm_eval": "ctxprobe.evals.lmeval.api",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxprobe' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
