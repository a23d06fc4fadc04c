"""Coverage of every interval ctxprobe prints, at known truth (in-process, no engine).

- Per cell (the run table, the heatmaps, the capacity curve, the limit search: one function,
  `evals.stats.clopper_pearson`): coverage at accuracy p is computed exactly, summing the binomial
  probabilities of the successes whose interval holds p, for p from 50 % to 100 % in steps of 0.5 points.
  Wilson's score interval, printed before, beside it.
- Paired (`compare`'s rows, `evals.paired.stats.paired_interval`): the interval depends on the discordant
  counts alone, so its coverage is computed exactly too, over m ~ Binomial(n, d) discordant pairs and the
  candidate's c ~ Binomial(m, pi) of them (terms below 1e-12 dropped and counted as misses). Newcombe's
  method 10, printed before, depends on all four cells: simulated (`--reps` draws of the 2x2 table a point,
  seeded). Truth: baseline accuracy 50-100 %, discordance d 0-20 %, the discordant pairs split 0, 25, 50, 75
  or 100 % in the candidate's favour (points with a negative cell are skipped: at 100 % baseline accuracy
  every discordant pair is the baseline's).

Printed: the least coverage over the grid at each n, and where it is; then the intervals with no discordant
pair. The anytime interval of adaptive runs (`evals.sequential.betting`) is a confidence sequence, valid by
construction at every stopping time, and is checked by `tests/evals/test_betting.py`.

    python benchmarks/bench_coverage.py [--n 5 10 20 30 50 100 200 500] [--reps 4000]
"""

from __future__ import annotations

import argparse
import math
import time
from functools import lru_cache

import numpy as np

from ctxprobe.evals.compare.paired import stats as paired_stats
from ctxprobe.evals.compare.paired.stats import PairedCounts
from ctxprobe.evals.compare.stats import Z95, clopper_pearson, wilson

ACCURACIES = [round(0.5 + 0.005 * i, 3) for i in range(101)]
PAIRED_ACCURACIES = [0.5, 0.7, 0.9, 0.95, 1.0]
DISCORDANCE = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2]
SPLITS = [0.0, 0.25, 0.5, 0.75, 1.0]  # the candidate's share of the discordant pairs
DROPPED = 1e-12

# The paired interval calls Clopper-Pearson on (discordant, n) and (wins, discordant): memoized here, the
# same function, so the exact sums over every count stay quick.
paired_stats.clopper_pearson = lru_cache(maxsize=None)(clopper_pearson)  # type: ignore[assignment]


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k), k = 0..n, X ~ Binomial(n, p), in log space (exact enough at n = 500 and p near 1)."""
    k = np.arange(n + 1)
    if p in (0.0, 1.0):
        return (k == (n if p == 1.0 else 0)).astype(float)
    logc = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in k])
    return np.exp(logc + k * math.log(p) + (n - k) * math.log1p(-p))


def binomial_coverage(interval, n: int) -> tuple[float, float]:
    """The least exact coverage over ACCURACIES, and the accuracy where it is."""
    bounds = [interval(k, n) for k in range(n + 1)]
    lo = np.array([b[0] for b in bounds]) - 1e-12
    hi = np.array([b[1] for b in bounds]) + 1e-12
    worst = (2.0, 0.0)
    for p in ACCURACIES:
        cover = float(binomial_pmf(n, p)[(lo <= p) & (p <= hi)].sum())
        worst = min(worst, (cover, p))
    return worst


def newcombe_method10(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, z: float = Z95
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval (method 10, no continuity correction), vectorized: the paired
    interval ctxprobe printed before, as it was written (two Wilson intervals and the phi correlation)."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n

    def wilson_v(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return np.where(k == 0, 0.0, np.maximum(0, centre - half)), np.where(k == n, 1.0, np.minimum(1, centre + half))

    l1, u1 = wilson_v(a + b)
    l2, u2 = wilson_v(a + c)
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    phi = np.where(denom > 0, (a * d - b * c) / np.sqrt(np.maximum(denom, 1)), 0.0)
    diff = p2 - p1
    lower = np.sqrt(np.maximum(0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    upper = np.sqrt(np.maximum(0, (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2))
    return np.maximum(-1, diff - lower), np.minimum(1, diff + upper)


def truths():
    """(baseline accuracy, discordance, candidate's share, cell probabilities both/base/cand/neither)."""
    for acc in PAIRED_ACCURACIES:
        for dis in DISCORDANCE:
            for split in SPLITS if dis else [0.5]:
                pc, pb = split * dis, (1 - split) * dis
                pa, pd = acc - pb, 1 - acc - pc
                if pa >= -1e-12 and pd >= -1e-12:
                    yield acc, dis, split, (max(pa, 0.0), pb, pc, max(pd, 0.0))


def newcombe_coverage(n: int, reps: int, seed: int) -> tuple[float, str]:
    rng = np.random.default_rng(seed)
    worst = (2.0, "")
    for acc, dis, split, probs in truths():
        table = rng.multinomial(n, probs, size=reps).astype(float)
        lo, hi = newcombe_method10(*table.T)
        truth = probs[2] - probs[1]
        cover = float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
        worst = min(worst, (cover, f"acc {acc:.0%} disc {dis:.0%} cand share {split:.0%}"))
    return worst


def paired_coverage(n: int) -> tuple[float, str]:
    """Exact: the interval reads only the discordant counts, so baseline accuracy does not change it."""
    worst = (2.0, "")
    for dis in DISCORDANCE:
        for split in SPLITS if dis else [0.5]:
            truth = split * dis - (1 - split) * dis
            m_pmf = binomial_pmf(n, dis)
            cover = 0.0
            for m in range(n + 1):
                if m_pmf[m] < DROPPED:
                    continue
                c_pmf = binomial_pmf(m, split)
                for c in range(m + 1):
                    weight = m_pmf[m] * c_pmf[c]
                    if weight < DROPPED:
                        continue
                    lo, hi = paired_stats.paired_interval(PairedCounts(n - m, m - c, c, 0))
                    if lo - 1e-12 <= truth <= hi + 1e-12:
                        cover += weight
            worst = min(worst, (cover, f"disc {dis:.0%} cand share {split:.0%} (any accuracy)"))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[5, 10, 20, 30, 50, 100, 200, 500])
    parser.add_argument("--reps", type=int, default=4000, help="simulated tables a point (Newcombe, before)")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    started = time.perf_counter()
    print("Least coverage of the 95% intervals over the grid (per cell: accuracy 50-100% in 0.5-point steps;")
    print("paired: baseline accuracy 50-100%, discordance 0-20%, candidate's share of it 0-100%).\n")
    print(
        f"{'n':>4} | {'Wilson (before)':>22} | {'Clopper-Pearson (now)':>22} | "
        f"{'Newcombe m10 (before, simulated)':>58} | {'exact paired (now)':>46}"
    )
    for n in args.n:
        w, cp = binomial_coverage(wilson, n), binomial_coverage(clopper_pearson, n)
        nw, ex = newcombe_coverage(n, args.reps, args.seed + n), paired_coverage(n)
        print(
            f"{n:>4} | {w[0]:7.2%} at acc {w[1]:6.1%} | {cp[0]:7.2%} at acc {cp[1]:6.1%} | "
            f"{nw[0]:7.2%} at {nw[1]:>47} | {ex[0]:7.2%} at {ex[1]:>35}",
            flush=True,
        )
    print("\nNo discordant pair (half the pairs both right, half both wrong), difference in points:")
    for n in (4, 9, 20, 50, 100):
        a = n // 2
        old_lo, old_hi = newcombe_method10(*(np.array([float(x)]) for x in (a, 0, 0, n - a)))
        lo, hi = paired_stats.paired_interval(PairedCounts(a, 0, 0, n - a))
        print(
            f"  {n:>3} pairs: Newcombe [{100 * old_lo[0]:+.1f}, {100 * old_hi[0]:+.1f}]  ->  "
            f"exact [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        )
    print(f"\n{time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
