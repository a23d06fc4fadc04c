"""The accuracy's confidence sequence against an independent computation (the mixture by quadrature, the
interval by a grid), and its time-uniform coverage in a seeded simulation (the paired one: test_betting)."""

import math
from functools import lru_cache

import numpy as np
import pytest
from scipy import integrate, stats

from ctxprobe.evals.compare.confseq import bernoulli_cs, bernoulli_log_mixture, p_from_log_e
from ctxprobe.evals.compare.stats import wilson


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


def test_an_e_value_of_one_is_no_evidence():
    assert p_from_log_e(0.0) == 1.0 and p_from_log_e(math.log(40.0)) == pytest.approx(0.025)
