"""Weighted Holm: the step-down adjustment with a share of alpha per test (Holm 1979, weighted form).

The gate declares each family's pooled row its primary test and the per-length rows secondary: the pooled
rows share `PRIMARY_SHARE` of the weight and the per-length rows the rest, so the primary tests keep most of
the power while the whole set of rows is still one family of tests at level alpha (family-wise)."""

from __future__ import annotations

from collections.abc import Sequence

PRIMARY_SHARE = 0.8


def row_weights(primary: Sequence[bool], share: float = PRIMARY_SHARE) -> list[float]:
    """Weights summing to 1: `share` spread over the primary rows, the rest over the others (all of it to
    one kind when the other is absent)."""
    n_primary = sum(1 for p in primary if p)
    n_other = len(primary) - n_primary
    if not n_primary or not n_other:
        return [1.0 / len(primary)] * len(primary) if primary else []
    return [share / n_primary if p else (1.0 - share) / n_other for p in primary]


def weighted_holm(pvalues: Sequence[float], weights: Sequence[float]) -> list[float]:
    """Adjusted p-values in input order: tests are taken in order of p / w; the k-th is multiplied by the
    weight still in play over its own weight, then made non-decreasing and capped at 1. Equal weights give
    Holm's adjustment."""
    if len(pvalues) != len(weights):
        raise ValueError("one weight per p-value")
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i] / weights[i] if weights[i] > 0 else float("inf"))
    remaining = float(sum(weights))
    adjusted = [1.0] * len(pvalues)
    running = 0.0
    for i in order:
        factor = remaining / weights[i] if weights[i] > 0 else float("inf")
        running = max(running, min(1.0, pvalues[i] * factor))
        adjusted[i] = running
        remaining -= weights[i]
    return adjusted
