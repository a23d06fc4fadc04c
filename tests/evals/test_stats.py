import pytest

from ctxprobe.evals.stats import wilson, z_for


@pytest.mark.parametrize("k,n,lo,hi", [
    (8, 10, 0.4902, 0.9433),
    (5, 10, 0.2366, 0.7634),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (1, 1, 0.2065, 1.0),
    (0, 1, 0.0, 0.7935),
    (81, 263, 0.2553, 0.3662),
    (50, 50, 0.9287, 1.0),
])
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
