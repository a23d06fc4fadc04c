"""What a paired gate judges, one `PairMetric` per name (`--metric NAME`): how a (baseline, candidate) pair
gives a difference, bounded a priori, that the gate's betting rows bet on (`evals.compare.sequential`), the
margin the rows judge against, and how a row's difference reads. `run --against` looks the metric up here
and handles every one alike (`evals.compare.against`).

A metric is one module: a subclass of `PairMetric` registered with `@pair_metric`. The built-in ones
(`correct`, `p_answer`, `kl`) are the modules of this package, each imported when the metrics are first
looked up, so a new module here is the whole change; a package outside registers its own through a
`ctxprobe.gate_metrics` entry point (the module is imported on first look-up), or a `--include` module."""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from ctxprobe.evals.compare.metrics.base import PairMetric, pair_metric, registered
from ctxprobe.tasks.errors import UserError

__all__ = ["PairMetric", "metric", "metric_names", "pair_metric"]

ENTRY_POINTS = "ctxprobe.gate_metrics"
BUILT_IN = ("correct", "p_answer", "kl")  # first, in this order (the order reports list metrics in); then the rest
_loaded = False


def _load() -> None:
    """Import this package's metric modules and the entry points' (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name != "base")
    for name in sorted(names, key=lambda n: (n not in BUILT_IN, BUILT_IN.index(n) if n in BUILT_IN else 0, n)):
        importlib.import_module(f"{__name__}.{name}")
    for entry in entry_points(group=ENTRY_POINTS):
        entry.load()


def metric_names() -> list[str]:
    """Every registered metric, the built-in ones first."""
    _load()
    return list(registered())


def metric(name: str) -> PairMetric:
    """The metric called `name`; one line listing the known ones when there is none."""
    _load()
    found = registered().get(name)
    if found is None:
        raise UserError(f"--metric {name!r} is no gate metric; known: {', '.join(registered())}")
    return found
