"""Intervals for a cell's mean over samples, where each sample gives one number (its mean over its answer
positions): the samples are the independent units, the positions of one prompt are not.

- `mean_interval`: Student's t on the per-sample values, for an unbounded mean (KL). No finite-sample
  interval can promise coverage for every distribution of an unbounded mean; t is the usual one and the
  one llama.cpp's "mean ± uncertainty" approximates (its ± is one standard error over tokens). Measured by
  `tests/evals/compare/test_kl_interval.py` (seeded): at n = 30 it covers 94-95 % for normal values and
  92-93 % for exponential ones (90 % at n = 10); heavy right tails cover much less (lognormal sigma 1.5:
  71 % at n = 10, 78 % at n = 30), as for any t interval: where a few samples of a cell lose the needle,
  its interval is narrower than it should be.
- `share_interval`: Clopper-Pearson on the sum of per-sample shares in [0, 1] (top-1 agreement) over the
  number of samples, fractional sums through the Beta quantiles. A share's variance is at most that of a
  coin with the same mean, so it is at least as wide as the binomial case needs (conservative: 99-100 %
  measured where each share is 4 positions), and it does not collapse to a point where every sample
  agrees (as t does)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import fmean, stdev

from ctxprobe.evals.compare.stats import beta_quantile

CONFIDENCE = 0.95
MEAN_METHOD = "95% Student t over samples (each sample: its mean over answer positions)"
SHARE_METHOD = "95% Clopper-Pearson on the per-sample shares' sum over samples"


@lru_cache(maxsize=256)
def t_quantile(confidence: float, df: float) -> float:
    """The two-sided Student t quantile: P(|T| <= t) = confidence, T ~ t(df), through the Beta
    distribution (P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2))."""
    if df < 1 or not 0.0 < confidence < 1.0:
        raise ValueError(f"need df >= 1 and 0 < confidence < 1, got {df}, {confidence}")
    x = beta_quantile(1.0 - confidence, df / 2.0, 0.5)
    return math.sqrt(df * (1.0 - x) / x)


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, lo, hi): the t interval of the mean; (mean, nan, nan) with one value, all nan with none."""
    if not values:
        return (math.nan, math.nan, math.nan)
    mean = fmean(values)
    if len(values) < 2:
        return (mean, math.nan, math.nan)
    half = t_quantile(confidence, len(values) - 1) * stdev(values) / math.sqrt(len(values))
    return (mean, mean - half, mean + half)


def share_interval(shares: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, lo, hi) of shares in [0, 1]: Clopper-Pearson at the shares' sum of len(shares) trials."""
    if not shares:
        return (math.nan, math.nan, math.nan)
    if any(not 0.0 <= s <= 1.0 for s in shares):
        raise ValueError("shares must lie in [0, 1]")
    n, total = len(shares), math.fsum(shares)
    tail = (1.0 - confidence) / 2.0
    lo = 0.0 if total <= 0.0 else beta_quantile(tail, total, n - total + 1.0)
    hi = 1.0 if total >= n else beta_quantile(1.0 - tail, total + 1.0, n - total)
    return (total / n, lo, hi)
