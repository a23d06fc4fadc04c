"""Statistics for paired samples: both builds answered the same prompt, so the evidence of a difference
is in the discordant pairs alone. Pure functions on counts and arrays; no pandas.

- `mcnemar_exact`: two-sided exact binomial test on the discordant pairs (b, c) — exact because nightly
  cells hold a handful of samples, where the chi-square approximation is wrong.
- `newcombe_paired_interval`: Newcombe's (1998) method 10, the hybrid score interval for a difference of
  paired proportions built from two Wilson intervals and the phi correlation (as written in Fagerland,
  Lydersen & Laake 2013, no continuity correction). It stays inside [-1, 1] and is sensible at 0 and n.
- `paired_bootstrap`: a percentile interval of the mean paired difference of partial credit, seeded.
- `holm`: Holm's step-down adjustment of a family of p-values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ctxprobe.evals.stats import Z95, wilson

INTERVAL_METHOD = "Newcombe hybrid score (method 10), 95%"
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240601


@dataclass(frozen=True)
class PairedCounts:
    """The 2x2 table of paired outcomes: `both` right, `base_only` right, `cand_only` right, `neither`."""

    both: int
    base_only: int
    cand_only: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.base_only + self.cand_only + self.neither

    @property
    def base_accuracy(self) -> float:
        return (self.both + self.base_only) / self.n if self.n else math.nan

    @property
    def cand_accuracy(self) -> float:
        return (self.both + self.cand_only) / self.n if self.n else math.nan

    @property
    def difference(self) -> float:
        """Candidate minus baseline accuracy."""
        return (self.cand_only - self.base_only) / self.n if self.n else math.nan


def counts_from(base_correct: Sequence[bool], cand_correct: Sequence[bool]) -> PairedCounts:
    pairs = list(zip(base_correct, cand_correct, strict=True))
    return PairedCounts(both=sum(1 for b, c in pairs if b and c), base_only=sum(1 for b, c in pairs if b and not c),
                        cand_only=sum(1 for b, c in pairs if c and not b),
                        neither=sum(1 for b, c in pairs if not b and not c))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: under no difference each discordant pair is a fair coin, so
    p = 2 * P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), capped at 1. No discordant pair: p = 1."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return min(1.0, 2.0 * tail / 2**n)


def newcombe_paired_interval(counts: PairedCounts, z: float = Z95) -> tuple[float, float]:
    """Interval of candidate minus baseline accuracy (Newcombe method 10); (nan, nan) with no pairs."""
    n = counts.n
    if n == 0:
        return (math.nan, math.nan)
    a, b, c, d = counts.both, counts.base_only, counts.cand_only, counts.neither
    p1, p2 = (a + b) / n, (a + c) / n  # baseline, candidate
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(denom) if denom else 0.0
    diff = p2 - p1
    lower = math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    upper = math.sqrt(max(0.0, (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2))
    return (max(-1.0, diff - lower), min(1.0, diff + upper))


def paired_bootstrap(base: Sequence[float], cand: Sequence[float], *, seed: int = BOOTSTRAP_SEED,
                     resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of (cand - base) and its percentile bootstrap interval, resampling pairs (so the pairing's
    correlation is kept). Seeded: the same input gives the same interval every time."""
    diffs = np.asarray(cand, dtype=float) - np.asarray(base, dtype=float)
    if diffs.size == 0:
        return (math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, diffs.size, size=(resamples, diffs.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [tail, 1.0 - tail])
    return (float(diffs.mean()), float(lo), float(hi))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order: the i-th smallest is multiplied by (m - i),
    then made non-decreasing, and capped at 1. Controls the family-wise error rate with no assumption
    about how the tests depend on each other."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted
