"""The sequential gate's pieces: weighted Holm by hand, the verdict rules, the cell stop rule, and the
gate's type-I error under optional stopping by simulation."""

import numpy as np
import pytest

from ctxprobe.evals.compare.paired.stats import holm
from ctxprobe.evals.compare.sequential.cells import StopRule, stop_reason
from ctxprobe.evals.compare.sequential.gate import SequentialRow, decide, family_done, final_verdicts, gate_verdict
from ctxprobe.evals.compare.sequential.holm import row_weights, weighted_holm


def test_weighted_holm_with_equal_weights_is_holm():
    p = [0.01, 0.04, 0.03, 0.005]
    assert weighted_holm(p, [0.25] * 4) == pytest.approx(holm(p))


def test_weighted_holm_by_hand():
    # weights 0.8 (primary) and 0.1, 0.1: order by p/w: 0.01/0.8, 0.004/0.1, 0.03/0.1
    adjusted = weighted_holm([0.01, 0.004, 0.03], [0.8, 0.1, 0.1])
    # steps: 0.01 * 1.0 / 0.8 = 0.0125; 0.004 * 0.2 / 0.1 = 0.008, raised to 0.0125; 0.03 * 0.1 / 0.1
    assert adjusted == pytest.approx([0.0125, 0.0125, 0.03])
    assert row_weights([True, False, False, False]) == pytest.approx([0.8, 0.2 / 3, 0.2 / 3, 0.2 / 3])
    assert row_weights([False, False]) == [0.5, 0.5]


def test_rows_fail_pass_or_stay_undecided():
    fail, fine, unsure = SequentialRow(primary=True), SequentialRow(primary=True), SequentialRow(primary=True)
    fail.add(30, 200, 0, margin=0.05)  # 30 losses, no win: a 13-point drop
    fine.add(0, 400, 0, margin=0.05)  # 400 ties: the drop is confidently under 5 points
    unsure.add(2, 20, 1, margin=0.05)
    assert final_verdicts([fail, fine, unsure], margin=0.05, alpha=0.05) == ["FAIL", "PASS", "UNDECIDED"]
    assert family_done([fail]) and family_done([fine]) and not family_done([unsure])
    assert gate_verdict([fail, fine], ["FAIL", "PASS"]) == "FAIL"
    secondary = SequentialRow(primary=False)
    assert gate_verdict([fine, secondary], ["PASS", "UNDECIDED"]) == "PASS"  # only primary rows must pass


def test_a_significant_drop_smaller_than_the_margin_does_not_fail():
    row = SequentialRow(primary=True)
    row.add(40, 3000, 0, margin=0.05)  # 1.3 points worse, clearly: but within the margin
    assert decide([row], margin=0.05, alpha=0.05) == ["PASS"]


@pytest.mark.parametrize("reps", [100, pytest.param(300, marks=pytest.mark.slow)])
def test_type_one_error_under_optional_stopping_by_simulation(reps):
    """Identical builds (no drop at all): a gate looking after every round of 10 pairs, stopping as soon as a
    row is decided, fails at most alpha of the time.

    The fast tier plays the first 100 of the full run's 300 seeded games (marked `slow`). At 100 it passes with
    5 FAILs or fewer: a gate that FAILed 15 % of the time would pass with probability 0.16 % (at 300, with 15
    or fewer: one at 10 % passes with probability 0.13 %)."""
    rng = np.random.default_rng(3)
    rounds, alpha = 20, 0.05
    failed = 0
    for _ in range(reps):
        rows = [SequentialRow(primary=True)] + [SequentialRow(primary=False) for _ in range(3)]
        for _ in range(rounds):
            for row in rows[1:]:
                d = rng.choice([-1, 0, 1], size=10, p=[0.1, 0.8, 0.1])
                row.add(int((d < 0).sum()), int((d == 0).sum()), int((d > 0).sum()), 0.0)
            rows[0].add(
                *(
                    sum(getattr(r.tally, k) for r in rows[1:]) - getattr(rows[0].tally, k)
                    for k in ("losses", "ties", "wins")
                ),
                0.0,
            )
            decide(rows, margin=0.0, alpha=alpha)
            if family_done(rows):
                break
        failed += "FAIL" in final_verdicts(rows, 0.0, alpha)
    assert failed / reps <= alpha


def test_cell_stop_rule():
    rule = StopRule(stop="decided", threshold=0.9, min_samples=3, max_samples=40)
    assert stop_reason(2, 2, rule, 40) is None  # under min_samples
    assert stop_reason(0, 5, rule, 40) == "below"
    assert stop_reason(40, 40, rule, 40) == "cap"
    assert stop_reason(39, 39, rule, 40) is None  # 39/39 does not yet say "above 0.9"
    assert stop_reason(39, 39, StopRule(stop="decided", threshold=0.9), 100) is None
    assert stop_reason(50, 100, StopRule(stop="decided", precision=0.15), 400) is None  # half-width 0.16
    assert stop_reason(60, 60, StopRule(stop="decided", threshold=0.9), 100) == "above"
    assert stop_reason(100, 200, StopRule(stop="decided", precision=0.15), 400) == "precision"
    with pytest.raises(ValueError, match="--threshold or --precision"):
        StopRule(stop="decided")
