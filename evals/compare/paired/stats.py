"""Statistics for paired samples: both builds answered the same prompt, so the evidence of a difference
is in the discordant pairs alone. Pure functions on counts and arrays; no pandas.

- `mcnemar_exact`: two-sided exact binomial test on the discordant pairs (b, c) — exact because nightly
  cells hold a handful of samples, where the chi-square approximation is wrong.
- `paired_interval`: an exact interval for the difference of paired accuracies. The difference is
  d * (2 * pi - 1), d the share of discordant pairs and pi the candidate's share of them. With m discordant
  pairs of n, m ~ Binomial(n, d) and, given m, the candidate's wins ~ Binomial(m, pi): a Clopper-Pearson
  interval for d at 99 % and one for pi at 96 % hold both at once with probability at least 95 %
  (Bonferroni: 1 % + 4 %), and the interval is the range of d * (2 * pi - 1) over that box. So its coverage
  is at least 95 % at every n, accuracy and discordance, with no approximation (`benchmarks/bench_coverage.py`
  checks it), and it excludes no difference exactly when the exact McNemar p-value is below 0.04 (pi's
  interval then excludes 1/2). The split gives most of alpha to pi, which carries the direction.
  Newcombe's hybrid score interval (method 10), used before, collapses where discordant pairs are few:
  [-3.3, +3.3] points for 9 pairs with none discordant, [0, 0] for 4, where the discordance could still be
  a third or more. The price of exactness is width where discordance is large (100 pairs with 5 and 5
  discordant: +-13 points, Newcombe +-6.6).
- `paired_bootstrap`: a percentile interval of the mean paired difference of partial credit, seeded.
- `holm`: Holm's step-down adjustment of a family of p-values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ctxprobe.evals.compare.stats import Z95, clopper_pearson

INTERVAL_METHOD = (
    "exact paired, 95%: Clopper-Pearson on the discordant share (99%) and on the candidate's "
    "share of it (96%), Bonferroni-combined"
)
DISCORDANCE_SHARE = 0.2  # of alpha, spent on the discordant share d (1 % of 5 %); the rest on pi
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
    return PairedCounts(
        both=sum(1 for b, c in pairs if b and c),
        base_only=sum(1 for b, c in pairs if b and not c),
        cand_only=sum(1 for b, c in pairs if c and not b),
        neither=sum(1 for b, c in pairs if not b and not c),
    )


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


def paired_interval(counts: PairedCounts, z: float = Z95) -> tuple[float, float]:
    """Interval of candidate minus baseline accuracy (see the module docstring); (nan, nan) with no pairs."""
    n = counts.n
    if n == 0:
        return (math.nan, math.nan)
    alpha = 2.0 * (1.0 - NormalDist().cdf(z))
    share_alpha = alpha * DISCORDANCE_SHARE
    discordant = counts.base_only + counts.cand_only
    d_lo, d_hi = clopper_pearson(discordant, n, _z(share_alpha))
    # (0, 1) when none is discordant: nothing is known of the direction
    pi_lo, pi_hi = clopper_pearson(counts.cand_only, discordant, _z(alpha - share_alpha))
    corners = [d * (2.0 * pi - 1.0) for d in (d_lo, d_hi) for pi in (pi_lo, pi_hi)]
    return (max(-1.0, min(corners)), min(1.0, max(corners)))


def _z(alpha: float) -> float:
    """The two-sided normal quantile of level 1 - alpha (how `clopper_pearson` takes its level)."""
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def paired_bootstrap(
    base: Sequence[float],
    cand: Sequence[float],
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Mean of (cand - base) and its percentile bootstrap interval, resampling pairs (so the pairing's
    correlation is kept). Seeded, and on the differences sorted: the same pairs give the same interval every
    time, in whatever order they came (a run's records are in the order its requests finished)."""
    diffs = np.sort(np.asarray(cand, dtype=float) - np.asarray(base, dtype=float))
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
