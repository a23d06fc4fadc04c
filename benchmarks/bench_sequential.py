"""Sequential sampling against a fixed grid, simulated with known truth (in-process, no engine).

The shape is the nightly suite's: 7 task families x lengths 32K...1M x 11 depths x `--samples` seeds,
prompt tokens weighted by length. True accuracies fall with length (1.0 at 32K to about 0.6 at 1M, a family
scale on the deficit, a dip at middle depths). A candidate drops 0, 2, 5 or 10 points at every length, or
10 points at 1M only; its answers are coupled to the baseline's (the same latent draw with probability
`--coupling`), as two quants of one model are.

Printed, for the paired gate (`--fail-if-drop MARGIN`) fixed-n (exact McNemar, the same weighted Holm over
pooled and per-length rows) against sequential (`evals.sequential.gate`): the share of the fixed grid's
prompt tokens spent, the gate's FAIL rate (type-I error at drop 0, power at 5 and 10), PASS / UNDECIDED
rates, and how often the rows' intervals (as the gate shows them: each bound one-sided at alpha) cover the
true difference. For one run's cells (`--stop decided
--threshold`): tokens, agreement with the truth, and the coverage of the cell intervals at their stops.

    python benchmarks/bench_sequential.py [--reps 2000] [--samples 4 20] [--caps 1 2] [--margin 0.05]
"""

from __future__ import annotations

import argparse
import math
import time
from functools import lru_cache

import numpy as np

from ctxprobe.evals.paired.stats import mcnemar_exact
from ctxprobe.evals.confseq import PairedTally
from ctxprobe.evals.sequential.cells import StopRule, cell_interval, stop_reason
from ctxprobe.evals.sequential.gate import SequentialRow, decide, final_verdicts, gate_verdict, open_rows
from ctxprobe.evals.sequential.holm import row_weights, weighted_holm

LENGTHS = [32768, 65536, 131072, 262144, 524288, 1_000_000]
DEFICIT = np.array([0.0, 0.02, 0.05, 0.12, 0.24, 0.40])  # 1 - accuracy by length, a typical curve
FAMILY_SCALE = np.array([0.5, 0.75, 1.0, 1.0, 1.25, 0.25, 1.0])  # 7 families, as nightly's tasks
DEPTHS = np.linspace(0.0, 100.0, 11)
SCENARIOS = [("drop 0", 0.0, None), ("drop 2", 0.02, None), ("drop 5", 0.05, None), ("drop 10", 0.10, None),
             ("drop 10 at 1M", 0.10, len(LENGTHS) - 1)]


def true_accuracy() -> np.ndarray:
    """(family, length, depth) accuracies: the family's deficit, a little deeper in the middle."""
    dip = 1.0 + 0.5 * np.sin(np.pi * DEPTHS / 100.0)
    acc = 1.0 - FAMILY_SCALE[:, None, None] * DEFICIT[None, :, None] * dip[None, None, :]
    return np.clip(acc, 0.0, 1.0)


def draw(rng: np.random.Generator, base: np.ndarray, cand: np.ndarray, reps: int, samples: int,
         coupling: float) -> tuple[np.ndarray, np.ndarray]:
    """(reps, family, length, seed, depth) correctness of baseline and candidate."""
    shape = (reps, *base.shape[:2], samples, base.shape[2])
    u = rng.random(shape)
    v = np.where(rng.random(shape) < coupling, u, rng.random(shape))
    return u < base[None, :, :, None, :], v < cand[None, :, :, None, :]


def candidate_accuracy(base: np.ndarray, drop: float, at: int | None) -> np.ndarray:
    cand = base.copy()
    if at is None:
        cand -= drop
    else:
        cand[:, at, :] -= drop
    return np.clip(cand, 0.0, 1.0)


def fixed_gate(diff: np.ndarray, margin: float, alpha: float) -> tuple[str, list[float]]:
    """diff: (family, length, seed, depth) in {-1, 0, 1}. FAIL when a row drops by more than the margin
    and its exact McNemar p survives weighted Holm; else pass."""
    rows, primary, means = [], [], []
    for f in range(diff.shape[0]):
        for lengths, is_primary in [(slice(None), True)] + [(slice(i, i + 1), False) for i in range(diff.shape[1])]:
            d = diff[f, lengths]
            b, c = int((d < 0).sum()), int((d > 0).sum())
            rows.append(mcnemar_exact(b, c))
            primary.append(is_primary)
            means.append((c - b) / d.size)
    adjusted = weighted_holm(rows, row_weights(primary))
    failed = any(p < alpha and m < -margin for p, m in zip(adjusted, means))
    return ("FAIL" if failed else "pass"), means


@lru_cache(maxsize=None)
def _interval(losses: int, ties: int, wins: int, alpha: float) -> tuple[float, float]:
    return SequentialRow(primary=False, tally=PairedTally(losses, ties, wins)).interval(alpha)


def sequential_gate(diff: np.ndarray, margin: float, alpha: float) -> tuple[str, np.ndarray, list[tuple[SequentialRow, float]]]:
    """Rounds of seeds across all families (`gate.open_rows` says which lengths of a family go out); returns
    the gate's verdict, the depth sweeps sent per length, and each row with the true difference it estimates (filled in by the caller)."""
    families, n_lengths, samples = diff.shape[:3]
    losses = (diff < 0).sum(axis=3)  # (family, length, seed)
    wins = (diff > 0).sum(axis=3)
    ties = diff.shape[3] - losses - wins
    rows = [[SequentialRow(primary=True)] + [SequentialRow(primary=False) for _ in range(n_lengths)]
            for _ in range(families)]
    flat = [r for fam in rows for r in fam]
    sent = np.zeros(n_lengths)  # depth sweeps sent per length
    for seed in range(samples):
        wanted = [open_rows(rows[f], margin) for f in range(families)]
        if not any(any(w) for w in wanted):
            break
        for f in range(families):
            send = [i for i in range(n_lengths) if wanted[f][1 + i]]
            for i in send:
                rows[f][1 + i].add(int(losses[f, i, seed]), int(ties[f, i, seed]), int(wins[f, i, seed]), margin)
                sent[i] += 1
            if wanted[f][0]:
                rows[f][0].add(int(losses[f, :, seed].sum()), int(ties[f, :, seed].sum()),
                               int(wins[f, :, seed].sum()), margin)
        decide(flat, margin, alpha)
    verdicts = final_verdicts(flat, margin, alpha)
    gate = gate_verdict(flat, verdicts)
    return gate, sent, [(r, 0.0) for r in flat]


def gate_table(reps: int, samples: int, margin: float, alpha: float, coupling: float, seed: int,
               cap: int) -> list[str]:
    base = true_accuracy()
    weights = np.array(LENGTHS, dtype=float)
    fixed_tokens = base.shape[0] * samples * len(DEPTHS) * weights.sum()
    lines = [f"paired gate: {reps} replications, nightly shape (7 families x {len(LENGTHS)} lengths x 11 depths x "
             f"{samples} seeds; sequential up to {cap} seeds), --fail-if-drop {margin}, alpha {alpha}, coupling {coupling}",
             f"{'scenario':>14}  {'fixed FAIL':>10}  {'seq FAIL':>8}  {'seq PASS':>8}  {'seq UNDEC':>9}  "
             f"{'tokens seq/fixed':>16}  {'CS cover':>8}  {'agree':>6}"]
    rng = np.random.default_rng(seed)
    for name, drop, at in SCENARIOS:
        cand = candidate_accuracy(base, drop, at)
        true_row = [float((cand[f] - base[f]).mean()) for f in range(base.shape[0])]
        true_len = cand.mean(axis=2) - base.mean(axis=2)
        b, c = draw(rng, base, cand, reps, max(samples, cap), coupling)
        diff = c.astype(np.int8) - b.astype(np.int8)
        fixed_fail = seq_fail = seq_pass = covered = n_rows = agree = 0
        tokens = 0.0
        for r in range(reps):
            fixed, _ = fixed_gate(diff[r][:, :, :samples], margin, alpha)
            fixed_fail += fixed == "FAIL"
            gate, sent, rows = sequential_gate(diff[r][:, :, :cap], margin, alpha)
            tokens += float((sent * weights).sum()) * len(DEPTHS)
            seq_fail += gate == "FAIL"
            seq_pass += gate == "PASS"
            truth_fail = any(t < -margin for t in true_row) or bool((true_len < -margin).any())
            agree += (gate == "FAIL") == truth_fail
            per_family = len(LENGTHS) + 1
            for k, (row, _) in enumerate(rows):
                f, j = divmod(k, per_family)
                true = true_row[f] if j == 0 else float(true_len[f, j - 1])
                lo, hi = _interval(row.tally.losses, row.tally.ties, row.tally.wins, alpha)  # as the gate shows it
                covered += lo <= true <= hi
                n_rows += 1
        lines.append(f"{name:>14}  {fixed_fail / reps:>10.3f}  {seq_fail / reps:>8.3f}  {seq_pass / reps:>8.3f}  "
                     f"{(reps - seq_fail - seq_pass) / reps:>9.3f}  {tokens / reps / fixed_tokens:>16.1%}  "
                     f"{covered / n_rows:>8.3f}  {agree / reps:>6.3f}")
    return lines


def cell_table(reps: int, samples: int, threshold: float, alpha: float, seed: int) -> list[str]:
    """One run's cells under `--stop decided --threshold`: each cell sampled in rounds up to `samples`."""
    acc = true_accuracy()
    rule = StopRule(stop="decided", threshold=threshold, max_samples=samples, alpha=alpha)
    rng = np.random.default_rng(seed + 1)
    weights = np.array(LENGTHS, dtype=float)[None, :, None]
    correct = rng.random((reps, *acc.shape, samples)) < acc[None, ..., None]
    successes = np.cumsum(correct, axis=-1)
    # The stop rule depends on (successes, n) only: tabulate it once.
    stops = np.zeros((samples + 1, samples + 1), dtype=bool)
    for n in range(1, samples + 1):
        for k in range(n + 1):
            stops[n, k] = stop_reason(k, n, rule, samples) is not None
    n_index = np.arange(1, samples + 1)
    stopped = stops[n_index, successes]  # (..., samples)
    used = np.argmax(stopped, axis=-1) + 1  # the first round a cell stops (the cap always stops)
    k_at = np.take_along_axis(successes, (used - 1)[..., None], axis=-1)[..., 0]
    lo = np.vectorize(lambda k, n: cell_interval(int(k), int(n), alpha)[0])(k_at, used)
    hi = np.vectorize(lambda k, n: cell_interval(int(k), int(n), alpha)[1])(k_at, used)
    truth = acc[None]
    cover = float(((lo <= truth) & (truth <= hi)).mean())
    decided_above, decided_below = lo > threshold, hi < threshold
    wrong = float(((decided_above & (truth < threshold)) | (decided_below & (truth > threshold))).mean())
    decided = float((decided_above | decided_below).mean())
    tokens = float((used * weights).sum() / (samples * weights * np.ones_like(acc)).sum() / reps)
    return [f"cells (--stop decided --threshold {threshold}, cap {samples}): {reps} replications of "
            f"{acc.size} cells",
            f"  tokens {tokens:.1%} of fixed; decided {decided:.1%} of cells, wrong side {wrong:.4f}; "
            f"interval coverage at the stops {cover:.4f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--samples", type=int, nargs="+", default=[4, 20])
    parser.add_argument("--caps", type=float, nargs="+", default=[1.0],
                        help="the sequential gate's cap per cell, as multiples of --samples (fixed-n keeps --samples)")
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--coupling", type=float, default=0.8)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    started = time.perf_counter()
    for samples in args.samples:
        for factor in args.caps:
            print("\n".join(gate_table(args.reps, samples, args.margin, args.alpha, args.coupling, args.seed,
                                        cap=round(factor * samples))))
        print("\n".join(cell_table(args.reps, samples, args.threshold, args.alpha, args.seed)))
        print()
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
