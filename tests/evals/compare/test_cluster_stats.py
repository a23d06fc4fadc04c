"""A nested run's chains as the unit of its pooled statistics (`evals.compare.clusters`): coverage and the
paired gate's false FAILs with a shared chain effect (seeded simulations sized for a unit test; the full
grid is `benchmarks/bench_cluster_coverage.py`), the interval checked against scipy, and the records'
path: pooled rows of nested records count chains, independent ones stay as they were."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from ctxprobe.evals.compare.accuracy import context_summary, accuracy_table
from ctxprobe.evals.compare.clusters import chain_means, cluster_of, clustered_proportion
from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.paired.p_answer import two_sided_anytime_p
from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.compare.paired.rows import compare_rows
from ctxprobe.evals.compare.paired.stats import mcnemar_exact
from ctxprobe.evals.compare.sequential.betting import PairedValues, betting_cs
from ctxprobe.evals.compare.stats import clopper_pearson
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.sample import NestedGrid
from tests.evals.factories import make_record

LENGTHS, DEPTHS = (1024, 2048), (10.0, 50.0, 90.0)


def _beta_chains(rng: np.random.Generator, k: int, mu: float, rho: float) -> np.ndarray:
    if rho == 0.0:
        return np.full(k, mu)
    return rng.beta(mu * (1 - rho) / rho, (1 - mu) * (1 - rho) / rho, size=k)


def _coverage(k: int, m: int, mu: float, rho: float, reps: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    hit_c = hit_s = 0
    for _ in range(reps):
        y = rng.binomial(m, _beta_chains(rng, k, mu, rho))
        lo, hi = clustered_proportion([int(v) for v in y], [m] * k)
        hit_c += lo <= mu <= hi
        lo, hi = clopper_pearson(int(y.sum()), k * m)
        hit_s += lo <= mu <= hi
    return hit_c / reps, hit_s / reps


@pytest.mark.parametrize("rho", [0.2, 0.5])
def test_chain_intervals_cover_where_per_sample_ones_do_not(rho: float) -> None:
    clustered, per_sample = _coverage(k=16, m=5, mu=0.5, rho=rho, reps=400, seed=11)
    print(f"rho {rho}: clustered {clustered:.3f}, per-sample {per_sample:.3f}")
    assert per_sample < 0.93  # the dependence is real at these sizes: counting samples covers too little
    assert clustered >= 0.94


def test_chain_intervals_with_no_chain_effect_still_cover() -> None:
    clustered, per_sample = _coverage(k=16, m=5, mu=0.8, rho=0.0, reps=300, seed=12)
    assert clustered >= 0.94 and per_sample >= 0.94


def _no_drop_diffs(rng: np.random.Generator, k: int, m: int, rho: float) -> np.ndarray:
    a = (1 - rho) / (2 * rho)
    against = rng.beta(a, a, size=k)  # mean 1/2: no drop on average, a direction shared within a chain
    discordant = rng.random((k, m)) < 0.2
    return np.where(discordant, np.where(rng.random((k, m)) < against[:, None], -1.0, 1.0), 0.0)


def test_paired_gate_false_fail_stays_at_alpha_with_chains() -> None:
    rng = np.random.default_rng(13)
    reps, alpha = 1000, 0.05
    per_sample = chained = 0
    for _ in range(reps):
        d = _no_drop_diffs(rng, k=16, m=20, rho=0.5)
        below = d.mean() < 0
        per_sample += below and mcnemar_exact(int((d < 0).sum()), int((d > 0).sum())) < alpha
        chained += below and two_sided_anytime_p(PairedValues(tuple(float(v) for v in d.mean(axis=1)))) < alpha
    print(f"false FAIL: per-sample McNemar {per_sample / reps:.3f}, chains {chained / reps:.3f}")
    assert per_sample / reps > alpha  # McNemar on correlated pairs fails a build that did not drop
    assert chained / reps <= alpha


def test_clustered_interval_against_scipy() -> None:
    y, m = [5, 3, 4, 0, 5, 2], [5, 5, 5, 5, 5, 5]
    k, n, p = len(y), sum(m), sum(y) / sum(m)
    v = k / (k - 1) * sum((yi - p * mi) ** 2 for yi, mi in zip(y, m)) / n ** 2
    n_eff = min(n, p * (1 - p) / v * (sps.t.ppf(0.975, n - 1) / sps.t.ppf(0.975, k - 1)) ** 2)
    want = (sps.beta.ppf(0.025, p * n_eff, n_eff - p * n_eff + 1), sps.beta.ppf(0.975, p * n_eff + 1, n_eff - p * n_eff))
    assert clustered_proportion(y, m) == pytest.approx(want, abs=1e-7)
    assert clustered_proportion([1, 0, 1], [1, 1, 1]) == clopper_pearson(2, 3)  # one sample a chain: exact CP
    assert clustered_proportion([3], [5]) == (0.0, 1.0)  # one chain: nothing measures between chains
    lo, hi = clustered_proportion([5, 5, 5], [5, 5, 5])  # no variance seen: the chains are the unit
    assert hi == 1.0 and lo == pytest.approx(sps.beta.ppf(0.025, 3 * 15 / 15 * _t_ratio(15, 3), 1), abs=1e-7)


def _t_ratio(n: int, k: int) -> float:
    return min(n, k * (sps.t.ppf(0.975, n - 1) / sps.t.ppf(0.975, k - 1)) ** 2) / k


def _nested(seed: int, length: int, depth: float, correct: bool) -> SampleRecord:
    rec = make_record(correct, context_tokens=length, depth=depth, seed=seed)
    recipe = rec.sample.recipe.model_copy(update={"nested": NestedGrid(lengths=LENGTHS, depths=DEPTHS)})
    return rec.model_copy(update={"sample": rec.sample.model_copy(update={"recipe": recipe,
                                                                          "sample_id": recipe.sample_id()})})


def test_a_nested_runs_records_pool_by_chain() -> None:
    outcome = {0: True, 1: True, 2: False, 3: True}  # chain 2 fails everywhere: its samples agree
    records = [_nested(s, n, d, ok) for s, ok in outcome.items() for n in LENGTHS for d in DEPTHS]
    assert len({cluster_of(r) for r in records}) == 4
    assert cluster_of(records[0]) == chain_key(records[0].sample.recipe)
    summary = context_summary(records)
    assert list(summary["clusters"]) == [4, 4]
    row = summary.iloc[0]
    assert (row.ci_lo, row.ci_hi) == pytest.approx(clustered_proportion([3, 3, 0, 3], [3, 3, 3, 3]))
    assert row.ci_lo < clopper_pearson(9, 12)[0]  # wider than the 12 samples counted as independent
    cells = accuracy_table(records)  # one sample per chain: the exact interval, as for any cell
    assert (cells.iloc[0].ci_lo, cells.iloc[0].ci_hi) == clopper_pearson(3, 4)
    one = context_summary([r for r in records if r.sample.recipe.seed == 0])
    assert (one.iloc[0].ci_lo, one.iloc[0].ci_hi) == (0.0, 1.0)  # one chain: no interval


def test_independent_records_stay_per_sample() -> None:
    records = [make_record(s % 4 != 2, context_tokens=n, depth=d, seed=s) for s in range(4) for n in LENGTHS for d in DEPTHS]
    summary = context_summary(records)
    assert "clusters" not in summary.columns
    assert (summary.iloc[0].ci_lo, summary.iloc[0].ci_hi) == clopper_pearson(9, 12)


def test_paired_rows_of_nested_records_bet_on_chain_means() -> None:
    cand_ok = {(0, 1024): False, (1, 2048): False}  # the candidate loses a whole length of chains 0 and 1
    pairs = [Pair(_nested(s, n, d, True), _nested(s, n, d, not (s, n) in cand_ok), True)
             for s in range(6) for n in LENGTHS for d in DEPTHS]
    rows = {r.level: r for r in compare_rows("c", pairs, "family")}
    fam = rows["family"]
    means = chain_means([float(p.cand.score.correct) - 1.0 for p in pairs], [cluster_of(p.base) for p in pairs])
    assert fam.clusters == 6 and fam.n == 36 and sorted(means) == [-0.5, -0.5, 0, 0, 0, 0]
    assert (fam.diff_lo, fam.diff_hi) == betting_cs(PairedValues(tuple(means)))
    assert fam.p_value == two_sided_anytime_p(PairedValues(tuple(means)))
    assert fam.p_value > mcnemar_exact(6, 0)  # six losses in two chains are weaker evidence than six apart
    assert json.loads(fam.model_dump_json())["clusters"] == 6
    cell = compare_rows("c", pairs, "cell")[0]
    assert cell.clusters is None and "clusters" not in json.loads(cell.model_dump_json())


def test_independent_paired_rows_have_no_cluster_field() -> None:
    pairs = [Pair(make_record(True, context_tokens=n, depth=d, seed=s), make_record(s != 0, context_tokens=n, depth=d, seed=s), True)
             for s in range(6) for n in LENGTHS for d in DEPTHS]
    fam = compare_rows("c", pairs, "family")[0]
    assert fam.clusters is None and "clusters" not in fam.model_dump()
    assert fam.p_value == mcnemar_exact(6, 0) and not math.isnan(fam.diff_lo)
    assert PairedTally(6, 30, 0).n == fam.n
