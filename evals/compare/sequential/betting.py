"""The paired gate's e-values as bets (Waudby-Smith & Ramdas 2024, "Estimating means of bounded random
variables by betting", JRSS-B): tighter than the Dirichlet mixture at the few hundred pairs a row holds.

A pair's difference X (candidate minus baseline) is -1, 0 or +1 for correctness (`PairedTally`), or any
value in [-1, 1] for a difference of answer probabilities (`PairedValues`). Against the null "the mean
difference is at most b", a bettor stakes a fraction lambda in [0, 1 / (1 + b)) on X - b each pair: every
factor 1 + lambda (X_i - b) is positive (X_i - b >= -(1 + b)), and under the null its conditional mean is
1 + lambda (E[X_i | past] - b) <= 1, so the wealth prod(1 + lambda (X_i - b)) is a nonnegative
supermartingale. Nothing in that argument uses X being ternary: only that it is bounded below by -1. Any
average of such wealths over a fixed grid of lambdas (a discrete Robbins mixture over the bet size) is one
too. By Ville's inequality its running maximum exceeds 1/alpha with probability at most alpha, however the
sampling stops. The wealth is a product, so it depends on the multiset of differences only: the three counts
(ternary) or the values themselves (continuous, kept whole so that any boundary, as the confidence sequence
needs, can be bet on later), and a resumed or reordered run reads the same evidence. The ternary path is
the continuous one with the values grouped by count (`log1p` summed once per distinct value): the same
wealth, and the ternary results stay what they were to the last bit.

Why a grid of bets rather than the Dirichlet mixture over the three outcomes: the mixture spreads its prior
over a two-dimensional simplex and pays about log n nats for it; a grid of K bets pays at most log K, and its
bets sit where the gate's rows are (ties by the hundred, a few discordant pairs). Rows whose pairs are not
identically distributed (a round sweeps several lengths and depths) keep the guarantee: within a balanced
round, by the AM-GM inequality the product's expectation is at most that of the round's mean bet.

- `log_e_pass(margin, tally)`: against "delta <= -margin" (large when the drop is confidently smaller than
  the margin: PASS).
- `log_e_fail(tally)`: against "delta >= 0" (large when the candidate is worse: the discordant pairs alone
  move it, as McNemar's test; ties stake nothing).
- `betting_cs(tally)`: the confidence sequence for delta, the values neither one-sided bettor rejects at
  alpha / 2."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ctxprobe.evals.compare.confseq import PairedTally, bisect

# Fractions of the largest safe stake: dense where the gate's rows bet (a few percent of pairs discordant).
STAKES = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
CS_METHOD = "anytime-valid confidence sequence (betting, a grid of bet sizes, Waudby-Smith & Ramdas 2024)"


@dataclass(frozen=True)
class PairedValues:
    """Paired differences so far (candidate minus baseline answer probability, say), kept whole and sorted:
    the e-values are products over them. `lo` / `hi` bound every value a pair can take, known before any is
    seen ([-1, 1] for a difference of probabilities; [-1, 0] for a divergence scaled to its cap, which can
    only be a loss): the largest safe bet against each null follows from them. `losses` / `ties` / `wins`
    count the negative, zero and positive ones (what the tables show beside the mean)."""

    values: tuple[float, ...] = ()
    lo: float = -1.0
    hi: float = 1.0

    def __post_init__(self) -> None:
        if not -1.0 <= self.lo < self.hi <= 1.0:
            raise ValueError(f"bounds must satisfy -1 <= lo < hi <= 1, got [{self.lo}, {self.hi}]")
        if any(not self.lo <= v <= self.hi for v in self.values):
            raise ValueError(f"paired differences must lie in [{self.lo:g}, {self.hi:g}]")
        # kept sorted: the sums over them then run in one order whatever order the pairs came in, so a
        # resumed or reordered run computes the same e-values to the last bit
        object.__setattr__(self, "values", tuple(sorted(float(v) for v in self.values)))

    def plus(self, more: Iterable[float]) -> PairedValues:
        return PairedValues(self.values + tuple(float(v) for v in more), self.lo, self.hi)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        """Mean difference, candidate minus baseline (nan with no pairs)."""
        return math.fsum(self.values) / self.n if self.n else math.nan

    @property
    def losses(self) -> int:
        return sum(1 for v in self.values if v < 0)

    @property
    def ties(self) -> int:
        return sum(1 for v in self.values if v == 0)

    @property
    def wins(self) -> int:
        return sum(1 for v in self.values if v > 0)

    @cached_property
    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=float)

    def mirrored(self) -> PairedValues:
        return PairedValues(tuple(-v for v in self.values), -self.hi, -self.lo)


Evidence = PairedTally | PairedValues  # what a row has seen: ternary counts or continuous values


def _log_wealth(tally: PairedTally, lam: float, boundary: float) -> float:
    """log prod(1 + lam (X_i - boundary)) over the pairs, from their counts."""
    total = 0.0
    for count, x_ in ((tally.losses, -1.0), (tally.ties, 0.0), (tally.wins, 1.0)):
        if count:
            total += count * math.log1p(lam * (x_ - boundary))
    return total


def mirrored(tally: Evidence) -> Evidence:
    """The same pairs with candidate and baseline swapped (every difference negated)."""
    if isinstance(tally, PairedValues):
        return tally.mirrored()
    return PairedTally(tally.wins, tally.ties, tally.losses)


def _log_mean_exp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values) / len(values))


def log_e_above(boundary: float, tally: Evidence) -> float:
    """log e-value against "delta <= boundary" (it grows when the mean difference is above the boundary):
    the average wealth of bettors staking `STAKES` of the largest safe bet, 1 / (boundary - lo) for values
    bounded below by lo (-1 for the ternary counts)."""
    if isinstance(tally, PairedValues):  # every stake at once: the same sums as `_log_wealth`'s
        return _log_values_above(tally.array, boundary, tally.lo, tally.hi)
    if tally.n == 0 or boundary >= 1.0:
        return 0.0
    top = 1.0 / (1.0 + boundary)
    return _log_mean_exp([_log_wealth(tally, s * top, boundary) for s in STAKES])


_STAKES = np.asarray(STAKES)


def _log_values_above(x: np.ndarray, boundary: float, lo: float, hi: float) -> float:
    """log e-value of values in [lo, hi] against "mean <= boundary": no bet where the null holds for any law
    (boundary at or above hi) or where no law meets it (boundary below lo: the values reject it outright, and
    the bet 1 / (boundary - lo) would not be defined)."""
    if x.size == 0 or boundary >= hi:
        return 0.0
    if boundary <= lo:
        return math.inf if boundary < lo else 0.0
    lams = _STAKES / (boundary - lo)
    return _log_mean_exp([float(w) for w in np.log1p(lams[:, None] * (x[None, :] - boundary)).sum(axis=1)])


def log_e_below(boundary: float, tally: Evidence) -> float:
    """log e-value against "delta >= boundary" (it grows when the mean difference is below the boundary)."""
    if isinstance(tally, PairedValues):
        return _log_values_above(-tally.array, -boundary, -tally.hi, -tally.lo)
    return log_e_above(-boundary, mirrored(tally))


def log_e_pass(margin: float, tally: Evidence) -> float:
    """log e-value against "the candidate drops by the margin or more" (PASS once it is large)."""
    return log_e_above(-margin, tally)


def log_e_fail(tally: Evidence) -> float:
    """log e-value against "the candidate is no worse" (FAIL's significance). With boundary 0 a tie (a zero
    difference) stakes nothing: only the discordant pairs move it."""
    return log_e_below(0.0, tally)


def betting_cs(tally: Evidence, alpha: float = 0.05) -> tuple[float, float]:
    """The confidence sequence for the mean paired difference: the boundaries neither one-sided bettor
    rejects at level alpha / 2 (the values' whole range, [-1, 1] for counts, with no pairs)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    low, high = (tally.lo, tally.hi) if isinstance(tally, PairedValues) else (-1.0, 1.0)
    if tally.n == 0:
        return (low, high)
    bound = math.log(2.0 / alpha)
    centre = min(max(tally.mean, low + 1e-9), high - 1e-9)
    lo = (
        low
        if log_e_above(low + 1e-9, tally) < bound
        else bisect(centre, low + 1e-9, lambda d: log_e_above(d, tally) < bound)
    )
    hi = (
        high
        if log_e_below(high - 1e-9, tally) < bound
        else bisect(centre, high - 1e-9, lambda d: log_e_below(d, tally) < bound)
    )
    return (lo, hi)
