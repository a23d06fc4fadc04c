"""Sequential sampling against a fixed grid, simulated with known truth (in-process, no engine).

The shape is the nightly suite's: 7 task families x lengths 32K...1M x 11 depths x `--samples` seeds,
prompt tokens weighted by length. True accuracies fall with length (1.0 at 32K to about 0.6 at 1M, a family
scale on the deficit, a dip at middle depths). A candidate drops 0, 2, 5 or 10 points at every length, or
10 points at 1M only; its answers are coupled to the baseline's (the same latent draw with probability
`--coupling`), as two quants of one model are.

Answer probabilities (`--metric p_answer`) on the same model: a sample's baseline p_answer is drawn from
Beta(K a, K (1 - a)) around its cell's accuracy a (mean a; K = `--concentration`, 4 by default: p spread
over the unit interval, most of its mass near 1 where a is high, so a sample's p says more than its bit but
far from everything). With probability `--coupling` the candidate's p is the baseline's, scaled by a_c / a and
jittered by +-20 % of its distance to the nearer end (mean kept), else an independent Beta draw around a_c:
the candidate's mean is exactly a_c, so a drop of d points in accuracy is a drop of d points in p_answer, the
two metrics gate the same effect, and a pair's p difference is 0 only where nothing moved.

Printed, for the paired gate (`--fail-if-drop MARGIN`) fixed-n (exact McNemar, the same weighted Holm over
pooled and per-length rows) against sequential (`evals.sequential.gate`): the share of the fixed grid's
prompt tokens spent, the gate's FAIL rate (type-I error at drop 0, power at 5 and 10), PASS / UNDECIDED
rates, and how often the rows' intervals (as the gate shows them: each bound one-sided at alpha) cover the
true difference. For one run's cells (`--stop decided
--threshold`): tokens, agreement with the truth, and the coverage of the cell intervals at their stops.

`--kl` prints the same for the KL gate (`--metric kl`, `evals.compare.paired.kl_gate`): each pair's KL at the
answer positions drawn from Gamma(2, mean / 2), independent across pairs, for builds whose mean KL is 0.002
nats, a second f16 instance's and q8_0 KV's (0.003, measured on the embedded engine), 0.005 and q4_0 KV's
(0.04), against the default margin (`kl_gate.KL_MARGIN`); scaled and capped as the gate does, replayed through
the same rounds; its "nothing dropped" is an equal build, so its share of the grid is the drop-0 figure of
the other two metrics.

`--gates` adds the table the nightly's settings are chosen from: for each metric (correct, p_answer) and
each sequential gate (old: PASS and FAIL on one weighted Holm; new: PASS each pooled row at the full alpha,
an intersection-union test, FAIL on weighted Holm), the FAIL rate at drop 0 (type-I), the PASS rate at drop
0, the FAIL rate at drops 2, 5 and 10 everywhere and at a 10-point drop at 1M only, and the prompt tokens
spent at drops 0 and 5 (millions, mean).

    python benchmarks/bench_sequential.py [--reps 2000] [--samples 4 20] [--caps 1 2] [--margin 0.05]
    python benchmarks/bench_sequential.py --gates --reps 400 --samples 4 8 12
    python benchmarks/bench_sequential.py --kl --reps 200 --samples 8
"""

from __future__ import annotations

import argparse
import time
from functools import cache

import numpy as np

from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.paired import kl_gate
from ctxprobe.evals.compare.paired.stats import mcnemar_exact
from ctxprobe.evals.compare.sequential.cells import StopRule, cell_interval, stop_reason
from ctxprobe.evals.compare.sequential.gate import SequentialRow
from ctxprobe.evals.compare.sequential.holm import row_weights, weighted_holm
from ctxprobe.evals.compare.sequential.replay import replay_gate

LENGTHS = [32768, 65536, 131072, 262144, 524288, 1_000_000]
DEFICIT = np.array([0.0, 0.02, 0.05, 0.12, 0.24, 0.40])  # 1 - accuracy by length, a typical curve
FAMILY_SCALE = np.array([0.5, 0.75, 1.0, 1.0, 1.25, 0.25, 1.0])  # 7 families, as nightly's tasks
DEPTHS = np.linspace(0.0, 100.0, 11)
SCENARIOS = [
    ("drop 0", 0.0, None),
    ("drop 2", 0.02, None),
    ("drop 5", 0.05, None),
    ("drop 10", 0.10, None),
    ("drop 10 at 1M", 0.10, len(LENGTHS) - 1),
]


def true_accuracy() -> np.ndarray:
    """(family, length, depth) accuracies: the family's deficit, a little deeper in the middle."""
    dip = 1.0 + 0.5 * np.sin(np.pi * DEPTHS / 100.0)
    acc = 1.0 - FAMILY_SCALE[:, None, None] * DEFICIT[None, :, None] * dip[None, None, :]
    return np.clip(acc, 0.0, 1.0)


def draw(
    rng: np.random.Generator, base: np.ndarray, cand: np.ndarray, reps: int, samples: int, coupling: float
) -> tuple[np.ndarray, np.ndarray]:
    """(reps, family, length, seed, depth) correctness of baseline and candidate."""
    shape = (reps, *base.shape[:2], samples, base.shape[2])
    u = rng.random(shape)
    v = np.where(rng.random(shape) < coupling, u, rng.random(shape))
    return u < base[None, :, :, None, :], v < cand[None, :, :, None, :]


def draw_p(
    rng: np.random.Generator,
    base: np.ndarray,
    cand: np.ndarray,
    reps: int,
    samples: int,
    coupling: float,
    concentration: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(reps, family, length, seed, depth) p_answer of baseline and candidate (the module docstring's model)."""
    shape = (reps, *base.shape[:2], samples, base.shape[2])
    a = np.clip(base, 1e-3, 1 - 1e-3)[None, :, :, None, :] * np.ones(shape)
    a_c = np.clip(cand, 1e-3, 1 - 1e-3)[None, :, :, None, :] * np.ones(shape)
    p_b = rng.beta(concentration * a, concentration * (1 - a))
    jitter = 0.2 * np.minimum(p_b, 1 - p_b) * rng.choice([-1.0, 1.0], size=shape)
    coupled = np.minimum(1.0, (a_c / a)) * (p_b + jitter)
    independent = rng.beta(concentration * a_c, concentration * (1 - a_c))
    p_c = np.where(rng.random(shape) < coupling, coupled, independent)
    return p_b, np.clip(p_c, 0.0, 1.0)


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


@cache
def _interval(losses: int, ties: int, wins: int, alpha: float) -> tuple[float, float]:
    return SequentialRow(primary=False, tally=PairedTally(losses, ties, wins)).interval(alpha)


def sequential_gate(
    diff: np.ndarray, margin: float, alpha: float, continuous: bool = False, pass_rule: str = "each"
) -> tuple[str, np.ndarray, list[tuple[SequentialRow, float]]]:
    """Rounds of seeds across all families, as `run --against` plays them (`evals.sequential.replay`);
    returns the gate's verdict, the depth sweeps sent per length, and each row (its true difference filled
    in by the caller)."""
    played = replay_gate(diff, margin, alpha, continuous=continuous, pass_rule=pass_rule)  # type: ignore[arg-type]
    return played.verdict, played.sent, [(r, 0.0) for fam in played.rows for r in fam]


def gate_table(reps: int, samples: int, margin: float, alpha: float, coupling: float, seed: int, cap: int) -> list[str]:
    base = true_accuracy()
    weights = np.array(LENGTHS, dtype=float)
    fixed_tokens = base.shape[0] * samples * len(DEPTHS) * weights.sum()
    lines = [
        f"paired gate: {reps} replications, nightly shape (7 families x {len(LENGTHS)} lengths x 11 depths x "
        f"{samples} seeds; sequential up to {cap} seeds), --fail-if-drop {margin}, alpha {alpha}, coupling {coupling}",
        f"{'scenario':>14}  {'fixed FAIL':>10}  {'seq FAIL':>8}  {'seq PASS':>8}  {'seq UNDEC':>9}  "
        f"{'tokens seq/fixed':>16}  {'CS cover':>8}  {'agree':>6}",
    ]
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
        lines.append(
            f"{name:>14}  {fixed_fail / reps:>10.3f}  {seq_fail / reps:>8.3f}  {seq_pass / reps:>8.3f}  "
            f"{(reps - seq_fail - seq_pass) / reps:>9.3f}  {tokens / reps / fixed_tokens:>16.1%}  "
            f"{covered / n_rows:>8.3f}  {agree / reps:>6.3f}"
        )
    return lines


GATES = (("old", "holm"), ("new", "each"))


def gates_table(
    reps: int, samples: int, margin: float, alpha: float, coupling: float, concentration: float, seed: int
) -> list[str]:
    """Old gate against new, for correctness and for p_answer: error and decision rates and tokens."""
    base = true_accuracy()
    weights = np.array(LENGTHS, dtype=float)
    grid = base.shape[0] * samples * len(DEPTHS) * weights.sum()
    scenarios = SCENARIOS
    lines = [
        f"nightly gate: {reps} replications, 7 families x {len(LENGTHS)} lengths x 11 depths, up to {samples} "
        f"seeds (fixed grid {grid / 1e6:,.0f}M prompt tokens), --fail-if-drop {margin}, alpha {alpha}, "
        f"coupling {coupling}, p_answer concentration {concentration}",
        f"{'metric':>8} {'gate':>4}  {'FAIL@0':>6}  {'PASS@0':>6}  {'FAIL@2':>6}  {'FAIL@5':>6}  {'FAIL@10':>7}  "
        f"{'FAIL@10@1M':>10}  {'Mtok@0':>7}  {'Mtok@5':>7}",
    ]
    rng = np.random.default_rng(seed)
    for metric in ("correct", "p_answer"):
        rates: dict[tuple[str, str], dict[str, float]] = {(g, n): {} for g, _ in GATES for n, _, _ in scenarios}
        for name, drop, at in scenarios:
            cand = candidate_accuracy(base, drop, at)
            if metric == "correct":
                b, c = draw(rng, base, cand, reps, samples, coupling)
                diff = c.astype(np.int8) - b.astype(np.int8)
            else:
                pb, pc = draw_p(rng, base, cand, reps, samples, coupling, concentration)
                diff = pc - pb
            for gate, rule in GATES:
                fail = passed = 0
                tokens = 0.0
                for r in range(reps):
                    verdict, sent, _ = sequential_gate(diff[r], margin, alpha, metric == "p_answer", rule)
                    fail += verdict == "FAIL"
                    passed += verdict == "PASS"
                    tokens += float((sent * weights).sum()) * len(DEPTHS)
                rates[(gate, name)] = {"fail": fail / reps, "pass": passed / reps, "tokens": tokens / reps / 1e6}
        for gate, _ in GATES:
            r0, r2, r5, r10, r1m = (
                rates[(gate, n)] for n in ("drop 0", "drop 2", "drop 5", "drop 10", "drop 10 at 1M")
            )
            lines.append(
                f"{metric:>8} {gate:>4}  {r0['fail']:>6.3f}  {r0['pass']:>6.3f}  {r2['fail']:>6.3f}  "
                f"{r5['fail']:>6.3f}  {r10['fail']:>7.3f}  {r1m['fail']:>10.3f}  {r0['tokens']:>7,.0f}  "
                f"{r5['tokens']:>7,.0f}"
            )
    return lines


KL_MEANS = (0.002, 0.003, 0.005, 0.04)  # nats: below f16's drift, f16 / q8_0 KV, above it, q4_0 KV


def kl_table(reps: int, samples: int, alpha: float, seed: int, shape: float = 2.0) -> list[str]:
    """The KL gate on the nightly's shape: FAIL / PASS / UNDECIDED rates and the share of the fixed grid's
    prompt tokens sent, per mean KL (the module docstring's model)."""
    margin = kl_gate.KL_MARGIN
    weights = np.array(LENGTHS, dtype=float)
    grid = len(FAMILY_SCALE) * samples * len(DEPTHS) * weights.sum()
    lines = [
        f"kl gate: {reps} replications, 7 families x {len(LENGTHS)} lengths x 11 depths, up to {samples} seeds, "
        f"--kl-margin {margin}, alpha {alpha}, pair KL ~ Gamma({shape:g}, mean / {shape:g})",
        f"{'mean KL':>8}  {'FAIL':>6}  {'PASS':>6}  {'UNDEC':>6}  {'tokens/fixed':>12}",
    ]
    rng = np.random.default_rng(seed)
    scale = np.vectorize(lambda v: kl_gate.scaled(float(v), margin))
    for mean in KL_MEANS:
        fail = passed = 0
        tokens = 0.0
        for _ in range(reps):
            kls = rng.gamma(shape, mean / shape, (len(FAMILY_SCALE), len(LENGTHS), samples, len(DEPTHS)))
            played = replay_gate(scale(kls), kl_gate.ROW_MARGIN, alpha, continuous=True, new_row=kl_gate.kl_row)
            fail += played.verdict == "FAIL"
            passed += played.verdict == "PASS"
            tokens += float((played.sent * weights).sum()) * len(DEPTHS)
        lines.append(
            f"{mean:>8.3f}  {fail / reps:>6.3f}  {passed / reps:>6.3f}  {(reps - fail - passed) / reps:>6.3f}  "
            f"{tokens / reps / grid:>12.1%}"
        )
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
    return [
        f"cells (--stop decided --threshold {threshold}, cap {samples}): {reps} replications of {acc.size} cells",
        f"  tokens {tokens:.1%} of fixed; decided {decided:.1%} of cells, wrong side {wrong:.4f}; "
        f"interval coverage at the stops {cover:.4f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--samples", type=int, nargs="+", default=[4, 20])
    parser.add_argument(
        "--caps",
        type=float,
        nargs="+",
        default=[1.0],
        help="the sequential gate's cap per cell, as multiples of --samples (fixed-n keeps --samples)",
    )
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--coupling", type=float, default=0.8)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--gates", action="store_true", help="only the old-against-new gate table, both metrics")
    parser.add_argument("--kl", action="store_true", help="only the KL gate's table (its share of the grid)")
    parser.add_argument("--concentration", type=float, default=4.0, help="p_answer's Beta concentration K")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.kl:
        for samples in args.samples:
            print("\n".join(kl_table(args.reps, samples, args.alpha, args.seed)), flush=True)
        print(f"({time.perf_counter() - started:.0f} s)")
        return
    if args.gates:
        for samples in args.samples:
            print(
                "\n".join(
                    gates_table(
                        args.reps, samples, args.margin, args.alpha, args.coupling, args.concentration, args.seed
                    )
                ),
                flush=True,
            )
        print(f"({time.perf_counter() - started:.0f} s)")
        return
    for samples in args.samples:
        for factor in args.caps:
            print(
                "\n".join(
                    gate_table(
                        args.reps,
                        samples,
                        args.margin,
                        args.alpha,
                        args.coupling,
                        args.seed,
                        cap=round(factor * samples),
                    )
                )
            )
        print("\n".join(cell_table(args.reps, samples, args.threshold, args.alpha, args.seed)))
        print()
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
