"""The paired statistics against computations done another way (by hand, by enumeration)."""

import itertools
import math

import pytest

from ctxprobe.evals.paired.stats import (
    PairedCounts, holm, mcnemar_exact, newcombe_paired_interval, paired_bootstrap,
)
from ctxprobe.evals.stats import wilson


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
    mean, lo, hi = first
    assert mean == pytest.approx(sum(c - b for b, c in zip(base, cand)) / len(base))
    assert lo < mean < hi and hi - lo > 0.05
    assert lo >= min(c - b for b, c in zip(base, cand)) and hi <= 0.0


def test_bootstrap_of_identical_builds_is_a_point():
    assert paired_bootstrap([0.5, 1.0], [0.5, 1.0]) == (0.0, 0.0, 0.0)


def test_newcombe_interval_from_its_definition():
    # Fagerland et al. (2013) eq. for the Newcombe hybrid score interval, written out independently
    a, b, c, d = 20, 8, 2, 10  # both right, baseline only, candidate only, neither
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b, n), wilson(a + c, n)
    phi = (a * d - b * c) / math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    lo = (p2 - p1) - math.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    hi = (p2 - p1) + math.sqrt((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2)
    got = newcombe_paired_interval(PairedCounts(a, b, c, d))
    assert got == pytest.approx((lo, hi))
    assert got[0] < -0.15 < got[1] < 0


@pytest.mark.parametrize("counts", [PairedCounts(*t) for t in itertools.product((0, 1, 5), repeat=4) if sum(t)])
def test_newcombe_interval_holds_the_difference_inside_minus_one_one(counts):
    lo, hi = newcombe_paired_interval(counts)
    assert -1.0 <= lo <= counts.difference <= hi <= 1.0
