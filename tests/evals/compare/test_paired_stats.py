"""The paired statistics against computations done another way (by hand, by enumeration)."""

import itertools
import math
import random
from functools import lru_cache

import pytest

from ctxprobe.evals.compare.paired.stats import PairedCounts, holm, mcnemar_exact, paired_bootstrap, paired_interval


def test_mcnemar_worked_by_hand():
    # b=1, c=6: p = 2 * (C(7,0) + C(7,1)) / 2^7 = 2 * 8 / 128
    assert mcnemar_exact(1, 6) == pytest.approx(0.125)
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)
    # b=0, c=5: 2 / 32
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_mcnemar_equals_enumerated_two_sided_binomial():
    # two-sided by enumeration: sum the probabilities of outcomes no likelier than the observed one
    for b, c in [(2, 9), (4, 11), (0, 12), (7, 3)]:
        n = b + c
        probs = [math.comb(n, k) / 2**n for k in range(n + 1)]
        expected = min(1.0, sum(p for p in probs if p <= probs[b] * (1 + 1e-12)))
        assert mcnemar_exact(b, c) == pytest.approx(expected)


def test_holm_on_known_vector():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_bootstrap_is_seeded_and_covers_the_mean():
    base = [1.0, 0.9, 0.8, 1.0, 0.5, 0.7, 1.0, 0.6, 0.9, 1.0]
    cand = [0.8, 0.9, 0.4, 1.0, 0.2, 0.7, 0.9, 0.6, 0.3, 1.0]
    first = paired_bootstrap(base, cand, seed=7)
    assert first == paired_bootstrap(base, cand, seed=7)
    assert first != paired_bootstrap(base, cand, seed=8)
    order = [3, 9, 0, 7, 1, 5, 8, 2, 6, 4]  # the same pairs in another order: records come as requests finish
    assert paired_bootstrap([base[i] for i in order], [cand[i] for i in order], seed=7) == first
    mean, lo, hi = first
    assert mean == pytest.approx(sum(c - b for b, c in zip(base, cand)) / len(base))
    assert lo < mean < hi and hi - lo > 0.05
    assert lo >= min(c - b for b, c in zip(base, cand)) and hi <= 0.0


def test_bootstrap_of_identical_builds_is_a_point():
    assert paired_bootstrap([0.5, 1.0], [0.5, 1.0]) == (0.0, 0.0, 0.0)


def _binomial_tail_root(k: int, n: int, tail: float, upper: bool) -> float:
    """A second Clopper-Pearson: the p where P(X <= k) (upper bound) or P(X >= k) (lower bound) equals
    `tail`, X ~ Binomial(n, p), by bisection on the binomial sums themselves (no beta function)."""

    def at_most(p: float) -> float:
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        value = at_most(mid) if upper else 1.0 - at_most(mid) + math.comb(n, k) * mid**k * (1 - mid) ** (n - k)
        if (value > tail) == upper:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _second_paired_interval(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """The paired interval written out again: Clopper-Pearson at 99 % (tails 0.5 %) on the discordant share
    m/n and at 96 % (tails 2 %) on the candidate's share c/m, the difference d * (2 pi - 1) at the box's corners."""
    n, m = a + b + c + d, b + c
    d_lo = 0.0 if m == 0 else _binomial_tail_root(m, n, 0.005, upper=False)
    d_hi = 1.0 if m == n else _binomial_tail_root(m, n, 0.005, upper=True)
    pi_lo = 0.0 if c == 0 else _binomial_tail_root(c, m, 0.02, upper=False)
    pi_hi = 1.0 if c == m else _binomial_tail_root(c, m, 0.02, upper=True)
    corners = [x * (2 * y - 1) for x in (d_lo, d_hi) for y in (pi_lo, pi_hi)]
    return min(corners), max(corners)


@pytest.mark.parametrize("n", [4, 9, 20, 50])
def test_no_discordant_pair_gives_the_rule_of_three_not_a_point(n):
    # 0 of n discordant: the discordance can be up to 1 - 0.005^(1/n) (solving (1 - d)^n = 0.005), and
    # with no discordant pair nothing is known of its direction: the interval is +-that bound.
    both = n // 2
    bound = 1 - 0.005 ** (1 / n)
    got = paired_interval(PairedCounts(both, 0, 0, n - both))
    # (to 1e-7: the level comes from Z95 = 1.959964, seven digits)
    assert got == pytest.approx((-bound, bound), abs=1e-7)
    assert got == pytest.approx(_second_paired_interval(both, 0, 0, n - both), abs=1e-7)
    assert bound > 1 - 0.05 ** (1 / n)  # wider than the one-sided 95 % bound (the rule of three's 3/n, exactly)
    if n == 9:
        assert got == pytest.approx((-0.4450, 0.4450), abs=1e-4)  # Newcombe's method 10 gave +-0.033
    if n == 4:
        assert got == pytest.approx((-0.7341, 0.7341), abs=1e-4)  # Newcombe's gave [0, 0]


@pytest.mark.parametrize("b,c", [(6, 0), (0, 6), (7, 1), (9, 2), (5, 0), (3, 3)])
def test_the_interval_excludes_no_difference_when_mcnemar_is_below_four_percent(b, c):
    lo, hi = paired_interval(PairedCounts(20, b, c, 10))
    assert (lo > 0 or hi < 0) == (mcnemar_exact(b, c) < 0.04)


@pytest.mark.parametrize("a,b,c,d", [(20, 8, 2, 10), (5, 0, 3, 1), (40, 1, 0, 9), (3, 6, 6, 3)])
def test_paired_interval_equals_a_second_implementation(a, b, c, d):
    assert paired_interval(PairedCounts(a, b, c, d)) == pytest.approx(_second_paired_interval(a, b, c, d), abs=1e-7)


@pytest.mark.parametrize(
    "n,base_only,cand_only", [(9, 0.0, 0.0), (9, 0.15, 0.0), (20, 0.05, 0.05), (30, 0.2, 0.05), (60, 0.02, 0.0)]
)
def test_paired_interval_covers_in_simulation(n, base_only, cand_only):
    # seeded draws of the 2x2 table at a known truth: coverage at least 95 % (the interval is exact; 2,000
    # draws leave a standard error of 0.5 point, so 94 % is the floor a true 95 % could fall to)
    rng = random.Random(n * 1000 + int(base_only * 100) + int(cand_only * 10))
    interval = lru_cache(maxsize=None)(lambda b, c, n: paired_interval(PairedCounts(n - b - c, b, c, 0)))
    covered = 0
    for _ in range(2000):
        draws = [rng.random() for _ in range(n)]
        b = sum(u < base_only for u in draws)
        c = sum(base_only <= u < base_only + cand_only for u in draws)
        lo, hi = interval(b, c, n)
        covered += lo <= cand_only - base_only <= hi
    assert covered / 2000 >= 0.94


@pytest.mark.parametrize("counts", [PairedCounts(*t) for t in itertools.product((0, 1, 5), repeat=4) if sum(t)])
def test_paired_interval_holds_the_difference_inside_minus_one_one(counts):
    lo, hi = paired_interval(counts)
    assert -1.0 <= lo <= counts.difference <= hi <= 1.0
