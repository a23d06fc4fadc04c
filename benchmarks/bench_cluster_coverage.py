"""Coverage of a nested run's pooled intervals, and the paired gate's false FAILs, when the samples of a
chain share an effect (in-process, no engine, seeded).

In the nested layout the samples of one chain read one haystack stream, so a model that misses a region
of it misses it at every length that holds it: samples within a chain are correlated. This measures
what ctxprobe's pooled statistics (`evals.compare.clusters`) do about it, beside the per-sample ones
they replace, at known truth:

- Accuracy pooled over a chain's cells: chain c's accuracy p_c ~ Beta with mean mu and intra-cluster
  correlation rho (Beta(mu (1 - rho) / rho, (1 - mu) (1 - rho) / rho); rho = 0: every chain at mu), m
  samples per chain ~ Binomial(m, p_c), k chains. Coverage of the true mu by the chain-clustered interval
  (`clustered_proportion`) and by the per-sample Clopper-Pearson interval on all k m samples, and their mean
  widths.
- The paired gate under no drop: each pair is discordant with probability q; a discordant pair of chain c
  goes against the candidate with probability pi_c ~ Beta(a, a), a = (1 - rho) / (2 rho) (mean 1/2: no
  drop on average, but a chain the candidate reads worse loses on many of its pairs). A FAIL at margin 0:
  a significant drop and a mean below 0, on one pooled row. Rates of the per-sample exact McNemar test
  (compare's fixed rule before), the per-sample betting e-value (the paired gate before) and the chain-mean
  betting p-value (compare's and the paired gate's rule for a nested row), against alpha.

    python benchmarks/bench_cluster_coverage.py [--reps 2000] [--seed 20250401]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ctxprobe.evals.compare.clusters import clustered_proportion
from ctxprobe.evals.compare.confseq import PairedTally, p_from_log_e
from ctxprobe.evals.compare.paired.p_answer import two_sided_anytime_p
from ctxprobe.evals.compare.paired.stats import mcnemar_exact
from ctxprobe.evals.compare.sequential.betting import PairedValues, log_e_fail
from ctxprobe.evals.compare.stats import clopper_pearson

RHOS = (0.0, 0.2, 0.5)
MUS = (0.5, 0.8, 0.9, 0.97)
# (chains, samples a chain): the nightly suite runs 8 seeds, i.e. 8 chains a task
GRID = ((8, 5), (8, 11), (16, 5), (16, 20), (32, 4))


def chain_accuracies(rng: np.random.Generator, k: int, mu: float, rho: float) -> np.ndarray:
    if rho == 0.0:
        return np.full(k, mu)
    return rng.beta(mu * (1.0 - rho) / rho, (1.0 - mu) * (1.0 - rho) / rho, size=k)


def accuracy_coverage(k: int, m: int, mu: float, rho: float, reps: int, seed: int) -> tuple[float, float, float, float]:
    """(clustered coverage, per-sample coverage, clustered mean width, per-sample mean width) of mu over
    `reps` draws."""
    rng = np.random.default_rng(seed)
    hit_c = hit_s = 0
    width_c = width_s = 0.0
    for _ in range(reps):
        y = rng.binomial(m, chain_accuracies(rng, k, mu, rho))
        lo, hi = clustered_proportion([int(v) for v in y], [m] * k)
        hit_c += lo <= mu <= hi
        width_c += hi - lo
        lo, hi = clopper_pearson(int(y.sum()), k * m)
        hit_s += lo <= mu <= hi
        width_s += hi - lo
    return hit_c / reps, hit_s / reps, width_c / reps, width_s / reps


def chain_diffs(rng: np.random.Generator, k: int, m: int, q: float, rho: float) -> np.ndarray:
    """k x m paired differences (-1, 0, +1) with no drop on average and a shared direction per chain."""
    against = np.full(k, 0.5) if rho == 0.0 else rng.beta((1 - rho) / (2 * rho), (1 - rho) / (2 * rho), size=k)
    discordant = rng.random((k, m)) < q
    loses = rng.random((k, m)) < against[:, None]
    return np.where(discordant, np.where(loses, -1.0, 1.0), 0.0)


def false_fail_rates(
    k: int, m: int, q: float, rho: float, reps: int, seed: int, alpha: float = 0.05
) -> tuple[float, float, float]:
    """(per-sample McNemar, per-sample betting, chain-mean betting) false-FAIL rates under no drop."""
    rng = np.random.default_rng(seed)
    mcnemar = per_sample = chained = 0
    for _ in range(reps):
        d = chain_diffs(rng, k, m, q, rho)
        losses, wins = int((d < 0).sum()), int((d > 0).sum())
        below = d.mean() < 0.0
        mcnemar += below and mcnemar_exact(losses, wins) < alpha
        tally = PairedTally(losses=losses, ties=k * m - losses - wins, wins=wins)
        per_sample += below and p_from_log_e(log_e_fail(tally)) < alpha
        chained += below and two_sided_anytime_p(PairedValues(tuple(float(v) for v in d.mean(axis=1)))) < alpha
    return mcnemar / reps, per_sample / reps, chained / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20250401)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"accuracy pooled over chains: coverage of the true accuracy, 95 % intervals, {args.reps} draws a row")
    print(
        f"{'k chains':>8} {'m/chain':>7} {'mu':>5} {'rho':>4} {'clustered':>10} {'per-sample':>11} "
        f"{'width cl.':>10} {'width p-s':>10}"
    )
    lowest = 1.0
    for k, m in GRID:
        for mu in MUS:
            for rho in RHOS:
                c, s, wc, ws = accuracy_coverage(k, m, mu, rho, args.reps, args.seed)
                lowest = min(lowest, c)
                print(f"{k:>8} {m:>7} {mu:>5.2f} {rho:>4.1f} {c:>10.3f} {s:>11.3f} {wc:>10.3f} {ws:>10.3f}")
    print(f"lowest clustered coverage: {lowest:.3f}")
    print(
        f"\npaired gate under no drop (alpha 0.05, margin 0, one pooled row, discordance q 0.2): false-FAIL rate, "
        f"{args.reps} draws a row"
    )
    print(
        f"{'k chains':>8} {'m/chain':>7} {'rho':>4} {'McNemar/sample':>15} {'betting/sample':>15} {'betting/chain':>14}"
    )
    for k, m in ((16, 20), (32, 10)):
        for rho in RHOS:
            a, b, c = false_fail_rates(k, m, 0.2, rho, args.reps, args.seed)
            print(f"{k:>8} {m:>7} {rho:>4.1f} {a:>15.3f} {b:>15.3f} {c:>14.3f}")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
