"""The confidence sequences against an independent computation (the mixture by quadrature or by the
Polya-urn product, the interval by a grid), and their time-uniform coverage in seeded simulations."""

import math
from functools import lru_cache

import numpy as np
import pytest
from scipy import integrate, stats

from ctxprobe.evals.confseq import (
    PairedTally, bernoulli_cs, bernoulli_log_mixture, dirichlet_log_mixture, discordant_log_e_worse,
    p_from_log_e, paired_cs, paired_log_e_below,
)
from ctxprobe.evals.stats import wilson


def _mixture_by_quadrature(k: int, n: int, prior: float = 0.5) -> float:
    dens = stats.beta(prior, prior).pdf
    value, _ = integrate.quad(lambda p: p**k * (1 - p) ** (n - k) * dens(p), 0, 1, limit=200, points=[k / n])
    return value


@pytest.mark.parametrize("k,n", [(7, 10), (0, 5), (44, 44), (26, 44), (120, 200)])
def test_bernoulli_mixture_and_interval_match_a_grid(k, n):
    assert bernoulli_log_mixture(k, n) == pytest.approx(math.log(_mixture_by_quadrature(k, n)), rel=1e-6)
    grid = np.linspace(1e-9, 1 - 1e-9, 200001)
    loglik = k * np.log(grid) + (n - k) * np.log1p(-grid)
    kept = grid[math.log(_mixture_by_quadrature(k, n)) - loglik < math.log(20)]
    lo, hi = bernoulli_cs(k, n)
    assert lo == pytest.approx(0.0 if k == 0 else kept.min(), abs=2e-5)
    assert hi == pytest.approx(1.0 if k == n else kept.max(), abs=2e-5)


def test_bernoulli_cs_is_wider_than_wilson_and_uninformative_at_zero():
    assert bernoulli_cs(0, 0) == (0.0, 1.0)
    lo, hi = bernoulli_cs(40, 44)
    wlo, whi = wilson(40, 44)
    assert lo < wlo and hi > whi
    assert bernoulli_cs(44, 44)[0] == pytest.approx(0.8832, abs=1e-4)  # 44/44: the accuracy is above 0.88


def _polya_log_mixture(counts: tuple[int, int, int], prior: float = 0.5) -> float:
    """The Dirichlet mixture's likelihood of one ordered sequence, as the product of its predictive
    probabilities (a Polya urn), independent of the gamma-function formula."""
    seen = [0, 0, 0]
    total = 0.0
    for kind, count in enumerate(counts):
        for _ in range(count):
            total += math.log((prior + seen[kind]) / (3 * prior + sum(seen)))
            seen[kind] += 1
    return total


@pytest.mark.parametrize("counts", [(6, 39, 0), (3, 20, 5), (0, 30, 0), (10, 10, 10)])
def test_paired_interval_matches_a_grid_over_the_simplex(counts):
    tally = PairedTally(*counts)
    assert dirichlet_log_mixture(tally) == pytest.approx(_polya_log_mixture(counts), abs=1e-9)
    step = 1 / 600
    qm, qp = np.meshgrid(np.arange(0, 1 + step, step), np.arange(0, 1 + step, step))
    q0 = 1 - qm - qp
    ok = q0 >= -1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        loglik = sum(np.where(c > 0, c * np.log(np.clip(q, 1e-300, None)), 0.0)
                     for c, q in zip(counts, (qm, q0, qp)))
    kept = ok & (_polya_log_mixture(counts) - loglik < math.log(20))
    delta = (qp - qm)[kept]
    lo, hi = paired_cs(tally)
    assert lo == pytest.approx(max(-1.0, delta.min()), abs=3 * step)
    assert hi == pytest.approx(min(1.0, delta.max()), abs=3 * step)


def test_discordant_e_value_is_the_sign_mixture_by_hand():
    # 6 losses, 0 wins: B(6.5, 0.5) / B(0.5, 0.5) * 2^6
    by_hand = math.gamma(6.5) * math.gamma(0.5) / math.gamma(7) / math.pi * 2**6
    assert math.exp(discordant_log_e_worse(PairedTally(6, 39, 0))) == pytest.approx(by_hand)
    assert discordant_log_e_worse(PairedTally(0, 39, 6)) == 0.0  # a candidate that only wins: no evidence of a drop
    assert p_from_log_e(0.0) == 1.0


def _ever_misses_bernoulli(seq: np.ndarray, p: float, interval) -> bool:
    k = np.cumsum(seq)
    return any(not (lo <= p <= hi) for lo, hi in (interval(int(k[i]), i + 1) for i in range(len(seq))))


def test_bernoulli_coverage_holds_at_every_n_while_wilson_rechecked_does_not():
    rng = np.random.default_rng(7)
    p, reps, n = 0.8, 300, 150
    runs = rng.random((reps, n)) < p
    cs, rechecked = lru_cache(None)(bernoulli_cs), lru_cache(None)(wilson)
    cs_miss = sum(_ever_misses_bernoulli(r, p, cs) for r in runs) / reps
    wilson_miss = sum(_ever_misses_bernoulli(r, p, rechecked) for r in runs) / reps
    assert cs_miss <= 0.05
    assert wilson_miss > 0.1  # a Wilson interval looked at after every sample misses far more than 5%


@lru_cache(None)
def _paired_look(counts: tuple[int, int, int], truth: float) -> tuple[bool, bool]:
    tally = PairedTally(*counts)
    lo, hi = paired_cs(tally)
    return not lo <= truth <= hi, p_from_log_e(paired_log_e_below(truth, tally)) < 0.05


def test_paired_coverage_and_pass_e_value_under_optional_stopping():
    rng = np.random.default_rng(11)
    probs = np.array([0.08, 0.85, 0.07])  # delta = -0.01
    truth = probs[2] - probs[0]
    reps, n = 120, 120
    misses = false_pass = 0
    for _ in range(reps):
        draws = rng.choice(3, size=n, p=probs)
        counts = np.zeros(3, dtype=int)
        missed = passed = False
        for i, d in enumerate(draws):
            counts[d] += 1
            if i % 10 == 9:  # look every 10 pairs, as rounds do; the null delta <= truth is true
                miss, wrongly_passed = _paired_look(tuple(map(int, counts)), float(truth))
                missed |= miss
                passed |= wrongly_passed
        misses += missed
        false_pass += passed
    assert misses / reps <= 0.05
    assert false_pass / reps <= 0.05
