"""Anytime-valid confidence sequences: intervals that stay valid when sampling stops on the data.

A Wilson interval re-checked after every round of samples covers far less than 95 % once the run may stop
the first time it looks decided. A confidence sequence covers the truth at every sample size at once
(P(truth outside the interval at ANY n) <= alpha), so stopping whenever it looks decided is honest.

Both sequences here are Robbins' mixture martingales (Robbins 1970, "Statistical methods related to the law
of the iterated logarithm"; Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
nonasymptotic confidence sequences", section on the beta-binomial mixture):

- `bernoulli_cs`: a sample's correctness is Bernoulli(p). Under the truth p, the ratio of the Beta(a, b)
  mixture likelihood to p's likelihood, M_n(p) = B(a + S, b + F) / B(a, b) / (p^S (1 - p)^F), is a
  nonnegative martingale with mean 1, so by Ville's inequality it ever exceeds 1/alpha with probability at
  most alpha. The sequence is {p : M_n(p) < 1/alpha}: an interval (the log-likelihood is concave), found
  by bisection on each side of S/n.
- `paired_cs`: a pair's difference (candidate minus baseline) is -1, 0 or +1, with probabilities
  (q-, q0, q+); the mean difference is delta = q+ - q-. The Dirichlet mixture over (q-, q0, q+) gives the
  same martingale for the three-outcome law; the set of laws it keeps is convex, and its projection on delta
  (through the profile likelihood of delta) is the interval. It depends on the three counts only.

The one-sided tests the gate needs come from the same martingales: the smallest M_n over a composite null
(e.g. delta >= -margin) is an e-process, and 1 / its running maximum an anytime-valid p-value
(`paired_p_above`, `paired_p_below`). Mixture priors are Jeffreys' (1/2 each): tight early, where
ctxprobe's cells are small."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from math import lgamma as gammaln

def betaln(a: float, b: float) -> float:
    """log B(a, b)."""
    return gammaln(a) + gammaln(b) - gammaln(a + b)


PRIOR = 0.5  # Jeffreys: Beta(1/2, 1/2) and Dirichlet(1/2, 1/2, 1/2)
CS_METHOD = ("anytime-valid confidence sequence (Robbins' mixture martingale: beta-binomial for accuracies, "
             "Dirichlet-multinomial on paired differences)")
_BISECT_STEPS = 60


def _xlogy(x: float, y: float) -> float:
    return 0.0 if x == 0 else x * math.log(y) if y > 0 else -math.inf


def bernoulli_log_mixture(successes: int, n: int, prior: float = PRIOR) -> float:
    """log of the Beta(prior, prior) mixture likelihood of one sequence with `successes` of `n`."""
    return float(betaln(prior + successes, prior + n - successes) - betaln(prior, prior))


def bernoulli_log_martingale(p: float, successes: int, n: int, prior: float = PRIOR) -> float:
    """log M_n(p): how much the mixture bettor has won against the claim that the accuracy is p."""
    return bernoulli_log_mixture(successes, n, prior) - _xlogy(successes, p) - _xlogy(n - successes, 1.0 - p)


def _bisect(inside: float, outside: float, keeps: Callable[[float], bool]) -> float:
    """The boundary between a point the set keeps (`inside`) and one it does not (`outside`)."""
    for _ in range(_BISECT_STEPS):
        mid = (inside + outside) / 2.0
        inside, outside = (mid, outside) if keeps(mid) else (inside, mid)
    return inside


def bernoulli_cs(successes: int, n: int, alpha: float = 0.05, prior: float = PRIOR) -> tuple[float, float]:
    """The confidence sequence for an accuracy after `successes` of `n` (at level 1 - alpha, valid at every
    n at once). With no samples: (0, 1)."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if n == 0:
        return (0.0, 1.0)
    bound = math.log(1.0 / alpha)

    def keeps(p: float) -> bool:
        return bernoulli_log_martingale(p, successes, n, prior) < bound

    centre = successes / n
    lo = 0.0 if keeps(0.0) else _bisect(centre, 0.0, keeps)
    hi = 1.0 if keeps(1.0) else _bisect(centre, 1.0, keeps)
    return (lo, hi)


@dataclass(frozen=True)
class PairedTally:
    """Paired outcomes so far: pairs the candidate lost (baseline right, candidate wrong), tied, won."""

    losses: int
    ties: int
    wins: int

    @property
    def n(self) -> int:
        return self.losses + self.ties + self.wins

    @property
    def mean(self) -> float:
        """Mean difference, candidate minus baseline (nan with no pairs)."""
        return (self.wins - self.losses) / self.n if self.n else math.nan


def dirichlet_log_mixture(tally: PairedTally, prior: float = PRIOR) -> float:
    """log of the Dirichlet(prior, prior, prior) mixture likelihood of one sequence with these counts."""
    counts = (tally.losses, tally.ties, tally.wins)
    return float(sum(gammaln(prior + c) - gammaln(prior) for c in counts)
                 + gammaln(3 * prior) - gammaln(3 * prior + tally.n))


def profile_log_likelihood(delta: float, tally: PairedTally) -> float:
    """The largest log-likelihood of the counts over laws (q-, q0, q+) with q+ - q- = delta.

    With q- = t, q+ = t + delta, q0 = 1 - 2t - delta, the log-likelihood is concave in t; its stationary
    point solves A t^2 + B t + C = 0 (below). The maximum is there or at an end of t's range."""
    lo_t, hi_t = max(0.0, -delta), (1.0 - delta) / 2.0
    cm, c0, cp = tally.losses, tally.ties, tally.wins

    def loglik(t: float) -> float:
        return _xlogy(cm, t) + _xlogy(c0, 1.0 - 2.0 * t - delta) + _xlogy(cp, t + delta)

    u = 1.0 - delta
    a, b, c = -2.0 * tally.n, cm * (u - 2.0 * delta) + cp * u - 2.0 * c0 * delta, cm * delta * u
    candidates = [lo_t, hi_t]
    if a != 0.0:
        disc = b * b - 4.0 * a * c
        if disc >= 0.0:
            root = math.sqrt(disc)
            candidates += [t for t in ((-b + root) / (2 * a), (-b - root) / (2 * a)) if lo_t <= t <= hi_t]
    return max(loglik(t) for t in candidates)


def paired_log_martingale(delta: float, tally: PairedTally, prior: float = PRIOR) -> float:
    """log of the smallest M_n over all laws with mean difference `delta` (the e-process against it)."""
    return dirichlet_log_mixture(tally, prior) - profile_log_likelihood(delta, tally)


def paired_cs(tally: PairedTally, alpha: float = 0.05, prior: float = PRIOR) -> tuple[float, float]:
    """The confidence sequence for the mean paired difference (in [-1, 1]); (-1, 1) with no pairs."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if tally.n == 0:
        return (-1.0, 1.0)
    bound = math.log(1.0 / alpha)

    def keeps(d: float) -> bool:
        return paired_log_martingale(d, tally, prior) < bound

    centre = tally.mean
    lo = -1.0 if keeps(-1.0) else _bisect(centre, -1.0, keeps)
    hi = 1.0 if keeps(1.0) else _bisect(centre, 1.0, keeps)
    return (lo, hi)


def discordant_log_e_worse(tally: PairedTally, prior: float = PRIOR) -> float:
    """log e-value against "the candidate is no worse" (delta >= 0), from the discordant pairs alone: the
    sequential form of McNemar's test. Given a pair is discordant, the candidate lost it with probability
    theta = q- / (q- + q+), and delta >= 0 is theta <= 1/2; the Beta(prior, prior) mixture against the
    null theta nearest the data (1/2, or the estimate where it is below) is an e-process. Ties cost nothing,
    so it is far more powerful than the three-outcome mixture where most pairs agree."""
    losses, wins = tally.losses, tally.wins
    if losses + wins == 0:
        return 0.0
    nearest = min(0.5, losses / (losses + wins))
    return max(0.0, bernoulli_log_martingale(nearest, losses, losses + wins, prior))


def paired_log_e_above(boundary: float, tally: PairedTally, prior: float = PRIOR) -> float:
    """log e-value against "delta >= boundary" (large when the candidate is clearly below it): the
    smallest martingale over that null is reached at the null law nearest the data."""
    if tally.n == 0:
        return 0.0
    nearest = max(boundary, tally.mean)
    return max(0.0, paired_log_martingale(nearest, tally, prior))


def paired_log_e_below(boundary: float, tally: PairedTally, prior: float = PRIOR) -> float:
    """log e-value against "delta <= boundary" (large when the candidate is clearly above it)."""
    if tally.n == 0:
        return 0.0
    nearest = min(boundary, tally.mean)
    return max(0.0, paired_log_martingale(nearest, tally, prior))


def p_from_log_e(log_e: float) -> float:
    """An anytime-valid p-value from an e-process's running maximum (log): min(1, 1/e)."""
    return min(1.0, math.exp(-log_e))
