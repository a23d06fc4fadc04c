"""The unit of independence of a pooled statistic: a chain of the nested layout, or a sample.

In the nested layout (`tasks/nested.py`) every sample of one chain (a task and seed over every length and
depth) reads the same haystack stream, and a model that misses a region of it misses it at every length
whose prompt holds it: the samples of a chain are correlated, and counting them as independent makes a
pooled interval too narrow and a pooled test too bold. One (length, depth) cell holds one sample per chain,
so per-cell statistics are unchanged; a statistic that pools cells (a length over its depths, a family over
its lengths) takes the chain as its unit here. A sample of the independent layout is its own cluster, so
every independent statistic is computed exactly as before (to the last bit: its outputs stay
byte-identical).

- `cluster_of(record)`: `tasks.identity.chain_key` of a nested recipe, the sample id of an independent one.
- `chain_means(values, clusters)`: each cluster's mean, the i.i.d. observations a paired difference, an
  answer probability or a KL is judged on once it pools chains (balanced chains: the same mean as the pairs').
- `clustered_proportion(successes, trials, z)`: the interval of a pooled accuracy over chains, Korn and
  Graubard's (1998, "Confidence intervals for proportions with small expected number of positive counts
  estimated from survey data", Survey Methodology 24): Clopper-Pearson at an effective sample size. Why it:
  - it is exact Clopper-Pearson (what every ctxprobe accuracy is printed with) where each chain holds one
    sample, so a pooled and a per-cell interval read alike, and it stays inside [0, 1] and sensible at
    0/n and n/n, where a Wald-type ratio-estimator interval collapses to a point (ctxprobe's accuracies sit
    near 100 %);
  - the effective size n_eff = p(1-p) / v is n over the design effect, v the ratio estimator's
    between-chain variance k/(k-1) sum_c (y_c - p m_c)^2 / n^2 (y_c successes of m_c in chain c, k chains);
  - the uncertainty of v itself is paid for by shrinking n_eff by (t_{n-1} / t_d)^2, the t quantiles at the
    interval's level, with d the number of chains that actually measure v: Kish's effective count of the
    chains' squared residuals, d = (sum_c r_c^2)^2 / sum_c r_c^4 with r_c = y_c - p m_c, at most k - 1. Where
    the residuals are alike (errors spread over the chains) d is k - 1 and the interval widens as a t
    interval with k - 1 df does (Korn and Graubard's correction); where one or two chains carry the whole
    variance d falls toward 1. Why: chain accuracies near 100 % are skewed (most chains perfect, a rare one
    poor), and with few chains a draw that holds no poor chain shows a handful of scattered errors whose
    variance looks binomial; k - 1 df then trusts it, the interval sits above the truth, and coverage fell
    to 88 % (16 chains x 20 samples at 97 %, intra-chain correlation 0.5; 91-93 % at 90 % with 8 or 16
    chains). Measured (`benchmarks/bench_cluster_coverage.py`, 5 chain grids x accuracy 50-97 % x
    correlation 0-0.5, and a scipy replica of the candidates) against the others: an upper confidence bound
    of the design effect (chi-square, k - 1 df) still fell to 92 % at the 95 % bound and was as wide at no
    correlation; the union with Clopper-Pearson on the chains alone (n_eff = k) covers but more than
    doubles the width where chains are independent; a Satterthwaite df (three times Kish's count, the
    normal-theory plug-in) fell to 93 %, twice it to 93.8 %. Kish's count keeps 97 % or more in every cell;
    the price, where chains are independent, is a third more width on average (0.25 against 0.19) and up to
    twice it at 97 % with 4-5 samples a chain, where a chain holds 0 or 1 errors and few chains carry them;
  - n_eff is at most n (Korn and Graubard's truncation: never narrower than the per-sample interval) and,
    where v is 0 (every chain all right or all wrong: nothing measures the design effect), the number of
    chains k (the worst design effect, every chain one observation).
  With fewer than 2 chains nothing measures the variation between chains: no interval, (0, 1), the same
  "nothing is known" as a cell with no sample. `benchmarks/bench_cluster_coverage.py` measures its coverage
  with a shared chain effect (and the per-sample interval's beside it)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from statistics import NormalDist

from ctxprobe.evals.compare.paired.mean_interval import t_quantile
from ctxprobe.evals.compare.stats import Z95, beta_quantile, clopper_pearson
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.identity import chain_key

CLUSTERED_METHOD = (
    "pooled over a nested run's chains: Korn-Graubard Clopper-Pearson at the effective sample size "
    "(between-chain variance, t with the chains' effective count as df), chains as the unit"
)


def cluster_of(record: SampleRecord) -> str:
    """A record's unit of independence: its chain (nested layout) or itself (independent layout)."""
    recipe = record.sample.recipe
    return chain_key(recipe) if recipe.nested is not None else f"sample:{record.sample.sample_id}"


def is_clustered(clusters: Sequence[Hashable]) -> bool:
    """Whether any cluster holds more than one of these observations (else they are independent as they are)."""
    return len(set(clusters)) < len(clusters)


def chain_means(values: Sequence[float], clusters: Sequence[Hashable]) -> list[float]:
    """Each cluster's mean of `values` (value i in cluster `clusters[i]`), in first-seen order."""
    sums: dict[Hashable, list[float]] = {}
    for v, c in zip(values, clusters, strict=True):
        sums.setdefault(c, []).append(float(v))
    return [math.fsum(vs) / len(vs) for vs in sums.values()]


def cluster_count(clusters: Sequence[Hashable]) -> int:
    return len(set(clusters))


def variance_df(squares: Sequence[float]) -> float:
    """The degrees of freedom of a between-chain variance from its chains' squared residuals: Kish's
    effective count (sum s)^2 / sum s^2, at most the chains less one (and k - 1 where every residual is 0)."""
    top = float(len(squares) - 1)
    fourth = math.fsum(s * s for s in squares)
    if fourth <= 0.0:
        return top
    return max(1.0, min(top, math.fsum(squares) ** 2 / fourth))


def clustered_proportion(successes: Sequence[int], trials: Sequence[int], z: float = Z95) -> tuple[float, float]:
    """The Korn-Graubard interval of a proportion pooled over clusters (cluster c: `successes[c]` of
    `trials[c]`), at the two-sided level of `z` (see the module docstring). Clusters with no trial are left
    out; (0, 1) with fewer than 2 clusters; with every cluster of one trial, exactly `clopper_pearson`."""
    kept = [(int(y), int(m)) for y, m in zip(successes, trials, strict=True) if m > 0]
    if any(not 0 <= y <= m for y, m in kept):
        raise ValueError("need 0 <= successes <= trials in every cluster")
    k, n, total = len(kept), sum(m for _, m in kept), sum(y for y, _ in kept)
    if k < 2:
        return (0.0, 1.0)
    if k == n:  # one trial per cluster: the clusters are the samples
        return clopper_pearson(total, n, z)
    p = total / n
    squares = [(y - p * m) ** 2 for y, m in kept]
    variance = k / (k - 1) * math.fsum(squares) / (n * n)
    n_eff = float(k) if variance <= 0.0 else min(float(n), p * (1.0 - p) / variance)
    confidence = 2.0 * NormalDist().cdf(z) - 1.0
    df = variance_df(squares)
    n_eff = min(float(n), n_eff * (t_quantile(confidence, n - 1) / t_quantile(confidence, df)) ** 2)
    x = p * n_eff
    tail = 1.0 - NormalDist().cdf(z)
    lo = 0.0 if total == 0 else beta_quantile(tail, x, n_eff - x + 1.0)
    hi = 1.0 if total == n else beta_quantile(1.0 - tail, x + 1.0, n_eff - x)
    return (lo, hi)
