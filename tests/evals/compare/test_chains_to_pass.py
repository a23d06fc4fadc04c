"""The fewest chains a nested gate row can PASS from (`gate.fewest_to_pass`): checked against a second
computation of the betting mixture by hand, against the floor every valid test has, and by simulation of the
law at the null's edge that the floor comes from; and the line a paired run against too few chains prints."""

from __future__ import annotations

import math
import random

import pytest

from ctxprobe.evals.compare.against import PairedRun, _rows, pass_reach
from ctxprobe.evals.compare.confseq import p_from_log_e
from ctxprobe.evals.compare.sequential.betting import STAKES, PairedValues, log_e_pass
from ctxprobe.evals.compare.sequential.gate import fewest_to_pass
from ctxprobe.tasks.sample import NestedGrid
from tests.evals.factories import make_record

LENGTHS, DEPTHS = (1024, 2048), (10.0, 50.0, 90.0)


def _by_hand(margin: float, alpha: float, lo: float, value: float) -> int:
    """n equal values: every bettor's wealth is (1 + lambda (value + margin))^n with lambda a share of
    1 / (lo's distance below -margin); the row PASSes once the bettors' mean wealth reaches 1 / alpha."""
    top = 1.0 / (-margin - lo)
    n = 1
    while math.log(sum((1.0 + s * top * (value + margin)) ** n for s in STAKES) / len(STAKES)) < -math.log(alpha):
        n += 1
    return n


@pytest.mark.parametrize(
    ("margin", "alpha", "lo", "hi", "value"),
    [
        (0.05, 0.05, -1.0, 1.0, 0.0),
        (0.05, 0.025, -1.0, 1.0, 0.0),
        (0.1, 0.05, -1.0, 1.0, 0.0),
        (0.02, 0.05, -1.0, 1.0, 0.0),
        (0.1, 0.05, -1.0, 0.0, 0.0),
        (0.1, 0.05, -1.0, 0.0, -0.02),
    ],
)
def test_the_fewest_chains_match_a_second_computation_and_clear_the_floor(
    margin: float, alpha: float, lo: float, hi: float, value: float
) -> None:
    n = fewest_to_pass(margin, alpha, lo, hi, value)
    assert n == _by_hand(margin, alpha, lo, value)
    floor = math.log(1.0 / alpha) / -math.log(1.0 - margin / (value - lo))
    assert n >= floor  # no valid test PASSes sooner
    assert p_from_log_e(log_e_pass(margin, PairedValues((value,) * n, lo, hi))) < alpha
    assert p_from_log_e(log_e_pass(margin, PairedValues((value,) * (n - 1), lo, hi))) >= alpha


def test_the_published_counts() -> None:
    """At 5 points on [-1, 1]: 98 chains for the paired run's rows (each at alpha), 116 for compare's
    two-sided sequence; the KL gate's rows (on [-1, 0], the margin a tenth of the cap): 48."""
    assert (fewest_to_pass(0.05, 0.05), fewest_to_pass(0.05, 0.025), fewest_to_pass(0.1, 0.05, -1.0, 0.0)) == (
        98,
        116,
        48,
    )


def test_a_build_at_the_nulls_edge_passes_at_most_alpha_of_the_time() -> None:
    """The law the floor comes from (a share margin of chains lost outright, the rest equal: a drop of exactly
    the margin), drawn at the fewest chains and at twice them: the PASS rule errs at most alpha."""
    margin, alpha = 0.1, 0.05
    n = fewest_to_pass(margin, alpha)
    assert n is not None
    rng = random.Random(7)
    for size in (n, 2 * n):
        draws = 2000
        passed = sum(
            p_from_log_e(
                log_e_pass(margin, PairedValues(tuple(-1.0 if rng.random() < margin else 0.0 for _ in range(size))))
            )
            < alpha
            for _ in range(draws)
        )
        assert passed / draws <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / draws), (size, passed)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        fewest_to_pass(0.0, 0.05)
    with pytest.raises(ValueError):
        fewest_to_pass(0.05, 1.0)
    assert fewest_to_pass(0.05, 0.05, most=10) is None


def _plan(seeds: int, margin: float) -> PairedRun:
    recipes = []
    for seed in range(seeds):
        for n in LENGTHS:
            for d in DEPTHS:
                rec = make_record(True, context_tokens=n, depth=d, seed=seed).sample.recipe
                recipes.append(rec.model_copy(update={"nested": NestedGrid(lengths=LENGTHS, depths=DEPTHS)}))
    return PairedRun(
        baseline=None,
        margin=margin,
        alpha=0.05,
        recipes=recipes,
        base={},  # type: ignore[arg-type]
        rows=_rows(recipes, "correct"),
    )


def test_a_paired_run_against_too_few_chains_says_it_can_fail_but_not_pass() -> None:
    line = pass_reach(_plan(8, 0.05))
    assert line is not None
    assert (
        "hold 8 chains" in line and "from 98 at the fewest" in line and "can FAIL the candidate but not PASS it" in line
    )
    assert pass_reach(_plan(8, 0.5)) is None  # at a 50-point margin 8 chains can PASS
    assert fewest_to_pass(0.5, 0.05) <= 8


def test_a_paired_run_of_independent_pairs_says_nothing() -> None:
    recipes = [
        make_record(True, context_tokens=n, depth=d, seed=s).sample.recipe
        for s in range(2)
        for n in LENGTHS
        for d in DEPTHS
    ]
    plan = PairedRun(
        baseline=None,
        margin=0.05,
        alpha=0.05,
        recipes=recipes,
        base={},  # type: ignore[arg-type]
        rows=_rows(recipes, "correct"),
    )
    assert pass_reach(plan) is None
