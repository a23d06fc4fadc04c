"""Confidence intervals for accuracies measured on a few samples.

`clopper_pearson` is the interval every accuracy is printed with (the run table, the heatmaps, the
capacity curve, the limit search): exact, so its coverage is at least 95 % at every n and every accuracy.
Wilson's score interval, kept for the confidence-sequence comparison, covers less near 100 %: 84 % at n = 5
and accuracy 96.5 %, 91 % at n = 100 and 99.5 % (`benchmarks/bench_coverage.py`)."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

Z95 = 1.959964


def z_for(confidence: float) -> float:
    """Two-sided normal quantile: 0.95 -> 1.959964, 0.90 -> 1.644854."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    Unlike the normal approximation it stays inside [0, 1] and is sensible at 0/n and n/n.
    With no trials nothing is known: (0.0, 1.0)."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


@lru_cache(maxsize=65536)  # a table's hundreds of cells share a few (successes, n): each is bisected once
def clopper_pearson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Clopper-Pearson's exact interval for a binomial proportion at the two-sided level of `z` (95 % by
    default): the lower bound is the p at which P(X >= successes) is alpha/2, the upper the p at which
    P(X <= successes) is alpha/2, X ~ Binomial(n, p). 0 and 1 at 0/n and n/n; (0.0, 1.0) with no trials."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    tail = 1.0 - NormalDist().cdf(z)  # alpha / 2
    lo = 0.0 if successes == 0 else beta_quantile(tail, successes, n - successes + 1)
    hi = 1.0 if successes == n else beta_quantile(1.0 - tail, successes + 1, n - successes)
    return (lo, hi)


def beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on its distribution function (60 halvings: exact to
    about 1e-18, far below any printed digit)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if regularized_beta(mid, a, b) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the Beta(a, b) distribution function at x: the continued fraction of Numerical Recipes
    (section 6.4, modified Lentz), on the side of x where it converges fast."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h
