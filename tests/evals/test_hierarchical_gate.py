"""The gate's two error rates by seeded simulation, through the same rounds `run --against` plays
(`evals.sequential.replay`): a false PASS (some family's pooled drop is exactly the margin) and any false
FAIL (no drop anywhere), each for correctness (ternary differences) and answer probabilities (continuous).
Each rate's one-sided 95 % Clopper-Pearson upper bound, computed here from the binomial tail, must stay
below alpha plus a small slack: a gate whose error were alpha + 3 points would fail these tests."""

import math

import numpy as np
import pytest

from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.sequential.betting import PairedValues
from ctxprobe.evals.compare.sequential.gate import SequentialRow, decide, gate_verdict
from ctxprobe.evals.compare.sequential.replay import replay_gate

ALPHA, MARGIN, SLACK = 0.05, 0.05, 0.02
FAMILIES, LENGTHS, ROUNDS, PAIRS = 3, 2, 30, 20


def _binomial_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def cp_upper(k: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound: the p with P(Bin(n, p) <= k) = 1 - confidence."""
    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _binomial_cdf(k, n, mid) > 1 - confidence else (lo, mid)
    return hi


def test_cp_upper_by_hand():
    # 0 of n: the bound solves (1 - p)^n = 0.05
    assert cp_upper(0, 100) == pytest.approx(1 - 0.05 ** (1 / 100), abs=1e-9)
    assert 0.05 < cp_upper(5, 100) < 0.11


def _ternary(rng: np.random.Generator, deltas: np.ndarray, discordant: float = 0.12) -> np.ndarray:
    """(family, length, round, pair) in {-1, 0, 1} with mean deltas[family] (each pair discordant with
    probability `discordant`)."""
    shape = (FAMILIES, LENGTHS, ROUNDS, PAIRS)
    d = deltas[:, None, None, None]
    p_loss, p_win = (discordant - d) / 2, (discordant + d) / 2
    u = rng.random(shape)
    return np.where(u < p_loss, -1, np.where(u < p_loss + p_win, 1, 0)).astype(np.int8)


def _continuous(rng: np.random.Generator, deltas: np.ndarray, moved: float = 0.3) -> np.ndarray:
    """Answer-probability differences: a pair moves with probability `moved` (else exactly 0), by
    deltas / moved plus uniform noise of +-0.3: mean deltas[family], bounded well inside [-1, 1]."""
    shape = (FAMILIES, LENGTHS, ROUNDS, PAIRS)
    moves = rng.random(shape) < moved
    step = deltas[:, None, None, None] / moved + 0.3 * rng.uniform(-1, 1, shape)
    return np.where(moves, step, 0.0)


def _rate(kind: str, deltas: list[float], margin: float, outcome: str, reps: int, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        d = np.asarray(deltas)
        diff = _ternary(rng, d) if kind == "binary" else _continuous(rng, d)
        hits += replay_gate(diff, margin, ALPHA, continuous=kind == "continuous").verdict == outcome
    return hits, reps


@pytest.mark.parametrize("reps", [100, pytest.param(500, marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_false_pass_at_most_alpha(kind, reps):
    """One family's pooled drop is exactly the margin (the PASS claim is false), the others have none and
    PASS almost always: the gate PASSes at most alpha of the time (intersection-union, each row at alpha).

    The fast tier replays the first 100 seeded rounds of the full run's 500 (marked `slow`). At 100 the bound
    passes only with 2 PASSes or fewer (at 500, 25 or fewer), so a gate that PASSes alpha + 3 points of the
    time passes the fast run with probability 1.1 % (0.6 % at 500). Measured: 2 of 100 and 9 of 500 (binary),
    2 of 100 and 8 of 500 (continuous)."""
    hits, _ = _rate(kind, [-MARGIN, 0.0, 0.0], MARGIN, "PASS", reps=reps, seed=11)
    assert cp_upper(hits, reps) < ALPHA + SLACK, (hits, reps)
    # and the test can see a PASS: with the drop at a third of the margin the same gate PASSes often
    fine, _ = _rate(kind, [-MARGIN / 3, 0.0, 0.0], MARGIN, "PASS", reps=60, seed=12)
    assert fine / 60 > 0.5


@pytest.mark.parametrize("reps", [80, pytest.param(500, marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_any_false_fail_at_most_alpha(kind, reps):
    """No drop anywhere, margin 0 (FAIL then needs only significance against no drop): across every row of
    every family, some row FAILs at most alpha of the time (weighted Holm over all rows).

    The fast tier replays 80 seeded rounds (the first 80 of the full run's 500, which is marked `slow`: the
    continuous gate takes ~30 s there). The bound still carries the smaller size: at 80 it passes only with 1
    FAIL or fewer (at 500, 25 or fewer), so a gate that FAILs alpha + 3 points of the time passes the fast run
    with probability 1.0 % (0.6 % at 500). Measured: 0 of 80 and 5 of 500 (binary), 1 of 80 and 2 of 500
    (continuous)."""
    hits, _ = _rate(kind, [0.0, 0.0, 0.0], 0.0, "FAIL", reps=reps, seed=13)
    assert cp_upper(hits, reps) < ALPHA + SLACK, (hits, reps)
    drop, _ = _rate(kind, [-0.05, 0.0, 0.0], 0.0, "FAIL", reps=60, seed=14)
    assert drop / 60 > 0.8  # a real drop does FAIL


def test_a_pass_needs_no_share_of_alpha():
    """Seven families that each just PASS on their own at alpha: the gate PASSes (the earlier rule, Holm
    over the rows, would leave them undecided)."""

    def rows() -> list[SequentialRow]:
        out = []
        for _ in range(7):
            row = SequentialRow(primary=True)
            row.add(0, 120, 0, margin=0.05)  # 120 ties: e-value against a 5-point drop above 20, below 7 x 20
            out.append(row)
        return out

    each, holm = rows(), rows()
    assert gate_verdict(each, [v or "UNDECIDED" for v in decide(each, 0.05, ALPHA)]) == "PASS"
    assert gate_verdict(holm, [v or "UNDECIDED" for v in decide(holm, 0.05, ALPHA, pass_rule="holm")]) == "UNDECIDED"


def test_continuous_rows_read_ternary_values_as_counts():
    """A row of values that happen to be -1, 0 and 1 holds the same evidence as the counts."""
    values = [-1.0] * 4 + [0.0] * 90 + [1.0] * 1
    counted, valued = SequentialRow(primary=True), SequentialRow(primary=True, tally=PairedValues())
    counted.add(4, 90, 1, margin=0.05)
    valued.add_values(values, margin=0.05)
    assert valued.log_e_fail == pytest.approx(counted.log_e_fail, rel=1e-12)
    assert valued.log_e_pass == pytest.approx(counted.log_e_pass, rel=1e-12)
    assert (valued.tally.losses, valued.tally.ties, valued.tally.wins) == (4, 90, 1)
    assert valued.interval(ALPHA) == pytest.approx(counted.interval(ALPHA), abs=1e-9)
    with pytest.raises(TypeError):
        counted.add_values([0.1], margin=0.05)
    assert isinstance(counted.tally, PairedTally)
