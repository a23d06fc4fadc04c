import math

import pytest

from ctxprobe.evals.compare.stats import clopper_pearson, wilson, z_for


@pytest.mark.parametrize(
    "k,n,lo,hi",
    [
        (8, 10, 0.4902, 0.9433),
        (5, 10, 0.2366, 0.7634),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
        (0, 1, 0.0, 0.7935),
        (81, 263, 0.2553, 0.3662),
        (50, 50, 0.9287, 1.0),
    ],
)
def test_known_wilson_values(k, n, lo, hi):
    got = wilson(k, n)
    assert got == pytest.approx((lo, hi), abs=1e-4)


def test_no_trials_is_uninformative():
    assert wilson(0, 0) == (0.0, 1.0)


def test_edges_are_exact_and_symmetric():
    assert wilson(0, 7)[0] == 0.0 and wilson(7, 7)[1] == 1.0
    lo, hi = wilson(3, 7)
    lo2, hi2 = wilson(4, 7)
    assert lo == pytest.approx(1 - hi2) and hi == pytest.approx(1 - lo2)


def test_z_changes_width():
    narrow, wide = wilson(8, 10, z=z_for(0.80)), wilson(8, 10, z=z_for(0.99))
    assert wide[0] < narrow[0] < 0.8 < narrow[1] < wide[1]
    assert z_for(0.95) == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize("k,n", [(-1, 5), (6, 5), (1, 0), (0, -1)])
def test_rejects_impossible_counts(k, n):
    with pytest.raises(ValueError):
        wilson(k, n)


def _tail_root(k: int, n: int, tail: float, upper: bool) -> float:
    """Clopper-Pearson's bound by bisection on the binomial sums themselves (a second implementation)."""

    def at_most(p: float, j: int) -> float:
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(j + 1))

    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        value = at_most(mid, k) if upper else 1.0 - at_most(mid, k - 1)
        if (value > tail) == upper:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@pytest.mark.parametrize("k,n", [(0, 5), (5, 5), (4, 5), (8, 10), (33, 35), (35, 35), (81, 263), (199, 200)])
def test_clopper_pearson_equals_the_binomial_tails(k, n):
    lo = 0.0 if k == 0 else _tail_root(k, n, 0.025, upper=False)
    hi = 1.0 if k == n else _tail_root(k, n, 0.025, upper=True)
    assert clopper_pearson(k, n) == pytest.approx((lo, hi), abs=1e-8)


def test_clopper_pearson_by_hand_at_the_edges():
    assert clopper_pearson(10, 10) == pytest.approx((0.025 ** (1 / 10), 1.0))  # (p^10 = 0.025)
    assert clopper_pearson(0, 9) == pytest.approx((0.0, 1 - 0.025 ** (1 / 9)))
    assert clopper_pearson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("n", [5, 10, 30, 100])
def test_clopper_pearson_covers_where_wilson_does_not(n):
    # exact coverage at accuracy p: the binomial probability of the counts whose interval holds p
    def worst_coverage(interval):
        bounds = [interval(k, n) for k in range(n + 1)]
        return min(
            sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k, (lo, hi) in enumerate(bounds) if lo <= p <= hi)
            for p in grid
        )

    grid = [0.5 + 0.005 * i for i in range(100)]
    assert worst_coverage(clopper_pearson) >= 0.95
    assert worst_coverage(wilson) < 0.94
