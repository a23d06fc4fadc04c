"""What a paired gate judges, one `PairMetric` per name (`--metric NAME`): how a (baseline, candidate) pair
gives a difference, bounded a priori, that the gate's betting rows bet on (`evals.compare.sequential`), the
margin the rows judge against, and how a row's difference reads. `run --against` looks the metric up here
and handles every one alike (`evals.compare.against`).

A metric is one module: a subclass of `PairMetric` registered with `@pair_metric`. The built-in ones
(`correct`, `p_answer`, `kl`) are the modules of this package, each imported when the metrics are first
looked up, so a new module here is the whole change; a package outside registers its own through a
`ctxprobe.gate_metrics` entry point (the module is imported on first look-up), or a `--include` module."""

from __future__ import annotations

from ctxprobe.evals.compare.metrics.base import BUILT_IN, ENTRY_POINT_GROUP, METRICS, PairMetric, pair_metric

__all__ = ["BUILT_IN", "ENTRY_POINT_GROUP", "METRICS", "PairMetric", "metric", "metric_names", "pair_metric"]


def metric_names() -> list[str]:
    """Every registered metric, the built-in ones first."""
    return METRICS.known()


def metric(name: str) -> PairMetric:
    """The metric called `name`; one line listing the known ones when there is none."""
    return METRICS.get(name, "--metric {name!r} is no gate metric; known: {known}")
