"""Anytime-valid confidence sequences: intervals that stay valid when sampling stops on the data.

A Wilson interval re-checked after every round of samples covers far less than 95 % once the run may stop
the first time it looks decided. A confidence sequence covers the truth at every sample size at once
(P(truth outside the interval at ANY n) <= alpha), so stopping whenever it looks decided is honest.

The accuracy sequence here is Robbins' mixture martingale (Robbins 1970, "Statistical methods related to the
law of the iterated logarithm"; Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
nonasymptotic confidence sequences", section on the beta-binomial mixture):

- `bernoulli_cs`: a sample's correctness is Bernoulli(p). Under the truth p, the ratio of the Beta(a, b)
  mixture likelihood to p's likelihood, M_n(p) = B(a + S, b + F) / B(a, b) / (p^S (1 - p)^F), is a
  nonnegative martingale with mean 1, so by Ville's inequality it ever exceeds 1/alpha with probability at
  most alpha. The sequence is {p : M_n(p) < 1/alpha}: an interval (the log-likelihood is concave), found
  by bisection on each side of S/n. Its prior is Jeffreys' (1/2 each): tight early, where ctxprobe's cells
  are small.

Paired differences (`PairedTally`: -1, 0 or +1 a pair) are bet on in `evals.sequential.betting`; an
e-process's running maximum gives an anytime-valid p-value (`p_from_log_e`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from math import lgamma as gammaln


def betaln(a: float, b: float) -> float:
    """log B(a, b)."""
    return gammaln(a) + gammaln(b) - gammaln(a + b)


PRIOR = 0.5  # Jeffreys: Beta(1/2, 1/2)
_BISECT_STEPS = 60


def _xlogy(x: float, y: float) -> float:
    return 0.0 if x == 0 else x * math.log(y) if y > 0 else -math.inf


def bernoulli_log_mixture(successes: int, n: int, prior: float = PRIOR) -> float:
    """log of the Beta(prior, prior) mixture likelihood of one sequence with `successes` of `n`."""
    return float(betaln(prior + successes, prior + n - successes) - betaln(prior, prior))


def bernoulli_log_martingale(p: float, successes: int, n: int, prior: float = PRIOR) -> float:
    """log M_n(p): how much the mixture bettor has won against the claim that the accuracy is p."""
    return bernoulli_log_mixture(successes, n, prior) - _xlogy(successes, p) - _xlogy(n - successes, 1.0 - p)


def bisect(inside: float, outside: float, keeps: Callable[[float], bool]) -> float:
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
    lo = 0.0 if keeps(0.0) else bisect(centre, 0.0, keeps)
    hi = 1.0 if keeps(1.0) else bisect(centre, 1.0, keeps)
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


def p_from_log_e(log_e: float) -> float:
    """An anytime-valid p-value from an e-process's running maximum (log): min(1, 1/e)."""
    return min(1.0, math.exp(-log_e))
