"""The paired gate's e-values as bets (Waudby-Smith & Ramdas 2024, "Estimating means of bounded random
variables by betting", JRSS-B): tighter than the Dirichlet mixture at the few hundred pairs a row holds.

A pair's difference X (candidate minus baseline) is -1, 0 or +1. Against the null "the mean difference is at
most b", a bettor stakes a fraction lambda >= 0 on X - b each pair; its wealth prod(1 + lambda (X_i - b)) is
a nonnegative supermartingale under the null, and so is any average of such wealths over a fixed grid of
lambdas (a discrete Robbins mixture over the bet size). By Ville's inequality its running maximum exceeds
1/alpha with probability at most alpha, however the sampling stops. The wealth depends on the three counts
only (the product commutes), so a resumed or reordered run reads the same evidence.

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

from ctxprobe.evals.confseq import PairedTally, bisect

# Fractions of the largest safe stake: dense where the gate's rows bet (a few percent of pairs discordant).
STAKES = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
CS_METHOD = "anytime-valid confidence sequence (betting, a grid of bet sizes, Waudby-Smith & Ramdas 2024)"


def _log_wealth(tally: PairedTally, lam: float, boundary: float) -> float:
    """log prod(1 + lam (X_i - boundary)) over the pairs, from their counts."""
    total = 0.0
    for count, x in ((tally.losses, -1.0), (tally.ties, 0.0), (tally.wins, 1.0)):
        if count:
            total += count * math.log1p(lam * (x - boundary))
    return total


def _log_mean_exp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values) / len(values))


def log_e_above(boundary: float, tally: PairedTally) -> float:
    """log e-value against "delta <= boundary" (it grows when the mean difference is above the boundary):
    the average wealth of bettors staking `STAKES` of the largest safe bet, 1 / (1 + boundary)."""
    if tally.n == 0 or boundary >= 1.0:
        return 0.0
    top = 1.0 / (1.0 + boundary)
    return _log_mean_exp([_log_wealth(tally, s * top, boundary) for s in STAKES])


def log_e_below(boundary: float, tally: PairedTally) -> float:
    """log e-value against "delta >= boundary" (it grows when the mean difference is below the boundary)."""
    mirrored = PairedTally(tally.wins, tally.ties, tally.losses)
    return log_e_above(-boundary, mirrored)


def log_e_pass(margin: float, tally: PairedTally) -> float:
    """log e-value against "the candidate drops by the margin or more" (PASS once it is large)."""
    return log_e_above(-margin, tally)


def log_e_fail(tally: PairedTally) -> float:
    """log e-value against "the candidate is no worse" (FAIL's significance). With boundary 0 a tie stakes
    nothing: only the discordant pairs move it."""
    return log_e_below(0.0, tally)


def betting_cs(tally: PairedTally, alpha: float = 0.05) -> tuple[float, float]:
    """The confidence sequence for the mean paired difference: the boundaries neither one-sided bettor
    rejects at level alpha / 2 ((-1, 1) with no pairs)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if tally.n == 0:
        return (-1.0, 1.0)
    bound = math.log(2.0 / alpha)
    centre = tally.mean
    lo = -1.0 if log_e_above(-1.0 + 1e-9, tally) < bound else bisect(
        centre, -1.0 + 1e-9, lambda d: log_e_above(d, tally) < bound)
    hi = 1.0 if log_e_below(1.0 - 1e-9, tally) < bound else bisect(
        centre, 1.0 - 1e-9, lambda d: log_e_below(d, tally) < bound)
    return (lo, hi)
