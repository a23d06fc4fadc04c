"""The paired gate's betting e-values: against the bets written out pair by pair, their level under optional
stopping and the coverage of their confidence sequence by seeded simulation, and which rows a family sends
next."""

import math

import numpy as np
import pytest

from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.sequential.betting import STAKES, betting_cs, log_e_fail, log_e_pass
from ctxprobe.evals.compare.sequential.gate import SequentialRow, family_done, open_rows


def _wealth_by_hand(diffs: list[float], boundary: float, above: bool) -> float:
    """The average over the stakes of prod(1 + lam (x - b)) (above) or prod(1 - lam (x - b)) (below),
    multiplied out pair by pair in the order given."""
    top = 1.0 / (1.0 + boundary) if above else 1.0 / (1.0 - boundary)
    sign = 1.0 if above else -1.0
    total = 0.0
    for s in STAKES:
        wealth = 1.0
        for x in diffs:
            wealth *= 1.0 + sign * s * top * (x - boundary)
        total += wealth
    return total / len(STAKES)


def test_e_values_are_the_bets_multiplied_out():
    diffs = [0] * 50 + [-1, 1, -1, 0, 0, 1, -1] + [0] * 30
    tally = PairedTally(losses=diffs.count(-1), ties=diffs.count(0), wins=diffs.count(1))
    assert math.exp(log_e_pass(0.05, tally)) == pytest.approx(_wealth_by_hand(diffs, -0.05, above=True))
    assert math.exp(log_e_fail(tally)) == pytest.approx(_wealth_by_hand(diffs, 0.0, above=False))
    # the order of the pairs does not matter (a resumed or reordered run reads the same evidence)
    assert _wealth_by_hand(diffs[::-1], -0.05, True) == pytest.approx(_wealth_by_hand(diffs, -0.05, True))
    # ties alone move FAIL's bettor not at all, and PASS's up
    assert log_e_fail(PairedTally(0, 500, 0)) == 0.0
    assert log_e_pass(0.05, PairedTally(0, 500, 0)) > math.log(20)


def _polya_log_mixture(counts: tuple[int, int, int], prior: float = 0.5) -> float:
    """The Dirichlet(1/2, 1/2, 1/2) mixture's likelihood of one ordered sequence, as the product of its
    predictive probabilities (a Polya urn)."""
    seen = [0, 0, 0]
    total = 0.0
    for kind, count in enumerate(counts):
        for _ in range(count):
            total += math.log((prior + seen[kind]) / (3 * prior + sum(seen)))
            seen[kind] += 1
    return total


def _dirichlet_interval_by_grid(counts: tuple[int, int, int], step: float = 1 / 1000) -> tuple[float, float]:
    """The Dirichlet mixture's 95% confidence sequence for delta = q+ - q-: the laws (q-, q0, q+) on a grid
    over the simplex whose likelihood ratio to the mixture stays below 20, projected on delta."""
    qm, qp = np.meshgrid(np.arange(0, 1 + step, step), np.arange(0, 1 + step, step))
    q0 = 1 - qm - qp
    with np.errstate(divide="ignore", invalid="ignore"):
        loglik = sum(np.where(c > 0, c * np.log(np.clip(q, 1e-300, None)), 0.0) for c, q in zip(counts, (qm, q0, qp)))
    delta = (qp - qm)[(q0 >= -1e-12) & (_polya_log_mixture(counts) - loglik < math.log(20))]
    return float(delta.min()), float(delta.max())


def test_the_interval_is_where_neither_bettor_rejects():
    tally = PairedTally(losses=9, ties=300, wins=3)
    lo, hi = betting_cs(tally)
    assert lo < tally.mean < hi
    # at the ends, the one-sided bettor's wealth is 2 / alpha = 40
    from ctxprobe.evals.compare.sequential.betting import log_e_above, log_e_below

    assert math.exp(log_e_above(lo, tally)) == pytest.approx(40.0, rel=1e-3)
    assert math.exp(log_e_below(hi, tally)) == pytest.approx(40.0, rel=1e-3)
    # tighter than the Dirichlet mixture where most pairs tie, which is where the gate's rows are
    d_lo, d_hi = _dirichlet_interval_by_grid((9, 300, 3))
    assert d_lo < lo and hi < d_hi and hi - lo < 0.8 * (d_hi - d_lo)


def _simulate(probs: list[float], reps: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice([-1, 0, 1], size=(reps, n), p=probs)


def test_false_pass_and_fail_under_optional_stopping_by_simulation():
    """At the nulls' edges (a drop of exactly the margin; no drop at all), a bettor looked at after every
    round of 5 pairs, stopped the first time it crosses 1/alpha, crosses at most alpha of the time."""
    alpha, margin = 0.05, 0.05
    for probs, log_e in (
        ([0.07, 0.91, 0.02], lambda t: log_e_pass(margin, t)),  # delta = -0.05
        ([0.05, 0.90, 0.05], log_e_fail),
    ):  # delta = 0
        paths = _simulate(probs, reps=300, n=300, seed=5)
        crossed = 0
        for path in paths:
            losses, ties, wins = np.cumsum(path < 0), np.cumsum(path == 0), np.cumsum(path > 0)
            crossed += any(
                log_e(PairedTally(int(losses[i]), int(ties[i]), int(wins[i]))) >= math.log(1 / alpha)
                for i in range(4, len(path), 5)
            )
        assert crossed / len(paths) <= alpha


@pytest.mark.parametrize("reps", [60, pytest.param(200, marks=pytest.mark.slow)])
def test_interval_coverage_at_every_n_by_simulation(reps):
    """The confidence sequence, looked at after every round of 10 pairs, covers the true mean at every look
    at least 1 - alpha of the time.

    The fast tier draws the first 60 of the full run's 200 seeded paths (marked `slow`). At 60 the test passes
    with 3 misses or fewer: a sequence that missed 15 % of the time would pass it with probability 1.5 %
    (at 200, with 10 or fewer: one that missed 10 % passes with probability 0.8 %). Measured: 0 of 60, 1 of 200."""
    probs = [0.06, 0.9, 0.04]
    truth = probs[2] - probs[0]
    paths = _simulate(probs, reps=reps, n=200, seed=9)
    missed = 0
    for path in paths:
        losses, ties, wins = np.cumsum(path < 0), np.cumsum(path == 0), np.cumsum(path > 0)
        looks = range(9, len(path), 10)  # a look after every round of 10 pairs
        intervals = (betting_cs(PairedTally(int(losses[i]), int(ties[i]), int(wins[i]))) for i in looks)
        missed += any(not lo <= truth <= hi for lo, hi in intervals)
    assert missed / len(paths) <= 0.05


def _rows(pooled: str | None, lengths: list[tuple[str | None, tuple[int, int, int]]]) -> list[SequentialRow]:
    rows = [SequentialRow(primary=True, verdict=pooled)]  # type: ignore[arg-type]
    for verdict, counts in lengths:
        row = SequentialRow(primary=False, tally=PairedTally(*counts))
        row.verdict = verdict  # type: ignore[assignment]
        rows.append(row)
    return rows


def test_open_rows_after_the_pooled_row_is_decided():
    looks_bad, looks_fine = (10, 50, 0), (1, 50, 1)
    # pooled undecided: the whole family goes out (decided lengths too: the pooled row weighs them equally)
    assert open_rows(_rows(None, [("PASS", looks_fine), (None, looks_fine)]), 0.05) == [True, True, True]
    # pooled PASS: only the undecided lengths that look like a drop
    assert open_rows(_rows("PASS", [(None, looks_bad), (None, looks_fine), ("PASS", looks_bad)]), 0.05) == [
        False,
        True,
        False,
        False,
    ]
    assert family_done(_rows("PASS", [(None, looks_fine)]), 0.05)
    # any FAIL ends the family
    assert family_done(_rows(None, [("FAIL", looks_bad), (None, looks_bad)]), 0.05)


def test_a_decided_pooled_row_takes_no_more_pairs():
    row = SequentialRow(primary=True)
    row.add(0, 400, 0, margin=0.05)
    row.verdict = "PASS"
    row.add(30, 10, 0, margin=0.05)
    assert row.tally == PairedTally(0, 400, 0)


def test_continuous_e_values_are_the_bets_multiplied_out():
    from ctxprobe.evals.compare.sequential.betting import PairedValues

    rng = np.random.default_rng(4)
    xs = list(np.where(rng.random(120) < 0.4, rng.uniform(-0.6, 0.3, 120), 0.0))
    values = PairedValues(tuple(xs))
    assert math.exp(log_e_pass(0.05, values)) == pytest.approx(_wealth_by_hand(xs, -0.05, True), rel=1e-9)
    assert math.exp(log_e_fail(values)) == pytest.approx(_wealth_by_hand(xs, 0.0, False), rel=1e-9)
    # order does not matter: a resumed or reordered run reads the same evidence
    reordered = PairedValues(tuple(xs[::-1]))
    assert reordered == values and log_e_fail(reordered) == log_e_fail(values)  # to the last bit
    assert betting_cs(PairedValues(()).plus(xs[60:]).plus(xs[:60])) == betting_cs(values)
    assert values.plus(xs[:3]).n == 123
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        PairedValues((1.5,))


def test_ternary_values_give_the_counts_results():
    """The continuous path, fed -1/0/1, is the ternary one: the same e-values and interval."""
    from ctxprobe.evals.compare.sequential.betting import PairedValues

    tally = PairedTally(losses=9, ties=300, wins=3)
    values = PairedValues((-1.0,) * 9 + (0.0,) * 300 + (1.0,) * 3)
    assert log_e_pass(0.05, values) == pytest.approx(log_e_pass(0.05, tally), rel=1e-12)
    assert log_e_fail(values) == pytest.approx(log_e_fail(tally), rel=1e-12)
    assert betting_cs(values) == pytest.approx(betting_cs(tally), abs=1e-9)


@pytest.mark.parametrize("reps", [60, pytest.param(300, marks=pytest.mark.slow)])
def test_continuous_level_and_coverage_under_optional_stopping_by_simulation(reps):
    """Continuous differences at the null's edge (mean exactly -margin; mean exactly 0), looked at every 10
    pairs: the bettor crosses 1/alpha at most alpha of the time, and the sequence covers the mean at every
    look at least 1 - alpha of the time.

    The fast tier draws 60 seeded paths of 300 pairs, the full run (marked `slow`) 300. At 60 the test passes
    with 3 crossings (or misses) or fewer: a bettor that crossed 15 % of the time would pass it with
    probability 1.5 % (at 300, with 15 or fewer: a bettor at 10 % passes with probability 0.13 %). Measured:
    0 of 60, at most 1 of 150 and 0 of 300."""
    from ctxprobe.evals.compare.sequential.betting import PairedValues

    alpha, margin = 0.05, 0.05
    rng = np.random.default_rng(21)
    n = 300
    for mean, log_e in ((-margin, lambda v: log_e_pass(margin, v)), (0.0, log_e_fail)):
        moved = rng.random((reps, n)) < 0.3
        paths = np.where(moved, mean / 0.3 + 0.3 * rng.uniform(-1, 1, (reps, n)), 0.0)
        crossed = missed = 0
        for path in paths:
            looks = [PairedValues(tuple(path[: i + 1])) for i in range(9, n, 10)]
            crossed += any(log_e(v) >= math.log(1 / alpha) for v in looks)
            if mean == 0.0:
                missed += any(not lo <= mean <= hi for lo, hi in (betting_cs(v) for v in looks[::3]))
        assert crossed / reps <= alpha
        assert missed / reps <= alpha


def test_a_row_of_identical_builds_passes_a_5_point_margin_at_98_pairs_not_before() -> None:
    """The floor docs/compare.md states (sequential sampling): differences bounded by [-1, 1] let a safe bet
    grow by at most log(1 + margin) a pair, so even ties (or p_answer differences of exactly 0) need 98 pairs
    to reach 1/alpha at alpha 0.05."""
    from ctxprobe.evals.compare.sequential.betting import PairedValues

    need = math.log(1 / 0.05)
    for n, passes in ((97, False), (98, True)):
        assert (log_e_pass(0.05, PairedTally(0, n, 0)) >= need) is passes
        assert (log_e_pass(0.05, PairedValues(tuple([0.0] * n))) >= need) is passes


def test_bounded_values_bet_up_to_what_their_bounds_allow():
    """Values known to lie in [-1, 0] (a divergence as a loss): against "mean >= b" the safe bet reaches
    1 / (b - (-0)) = 1 / -b, not 1 / (1 - b) as for [-1, 1]; the wealth is that bet multiplied out by hand,
    every factor stays positive, and the interval stays inside the bounds."""
    from ctxprobe.evals.compare.sequential.betting import PairedValues, log_e_below

    rng = np.random.default_rng(5)
    xs = list(-rng.uniform(0.2, 0.6, 40))
    values = PairedValues(tuple(xs), lo=-1.0, hi=0.0)
    b = -0.1
    by_hand = np.mean([np.prod([1 + (s / -b) * (b - x) for x in xs]) for s in STAKES])
    assert math.exp(log_e_below(b, values)) == pytest.approx(by_hand, rel=1e-9)
    assert all(1 + (max(STAKES) / -b) * (b - x) > 0 for x in (-1.0, 0.0))  # the bounds' worst cases
    wide = PairedValues(tuple(xs))  # the same values, bounded only by [-1, 1]: a smaller safe bet, less evidence
    assert log_e_below(b, wide) < log_e_below(b, values)
    lo, hi = betting_cs(values)
    assert -1.0 <= lo < float(np.mean(xs)) < hi <= 0.0
    assert values.mirrored().lo == 0.0 and values.mirrored().hi == 1.0
    assert betting_cs(PairedValues(lo=-1.0, hi=0.0)) == (-1.0, 0.0)
    with pytest.raises(ValueError, match=r"\[-1, 0\]"):
        PairedValues((0.5,), lo=-1.0, hi=0.0)
