"""What answer probabilities buy the paired gate, on the real embedded engine (llama.cpp's server, Gemma 3 270M).

Four fixed runs of the same prompts, each with answer log-probabilities (`--logprobs`): the baseline with an f16
KV cache, candidates with q4_0 and q8_0 KV caches, and a second f16 engine instance. For q4_0 against f16 and
for the second f16 against the first, the paired sequential gate (`run --against`'s rules: one round of seeds
at a time across the open lengths, `evals.sequential.replay`) is replayed over the pairs in the order a paired
run sends them, once on correctness (the binary gate) and once on `p_answer`. Printed for each: the verdict,
the pairs and the candidate's prompt tokens spent until it decided (all of them when it did not), and the
p_answer gate's tokens as a share of the binary gate's. Then `ctxprobe compare f16 q8_0 q4_0`: its KL-at-depth
table, with the heatmap PNG written beside the runs.

    python benchmarks/bench_logprob_gate.py [--runs DIR] [--lengths 1k,2k] [--depths 0:100:25] [--samples 4]

`--runs DIR` reuses (and resumes) the runs kept there under the labels f16, q4_0, q8_0, f16b; without it they go
to a temporary folder. One engine thread (`--threads 1`): on a shared two-core machine llama.cpp's two threads
spend their time waiting on each other.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import ctxprobe
from ctxprobe.evals.log.load import Run, load_run
from ctxprobe.evals.paired.pairing import pair_runs
from ctxprobe.evals.sequential.replay import replay_gate
from ctxprobe.runners.response import AnswerLogprobs

KV = {"f16": "f16", "q4_0": "q4_0", "q8_0": "q8_0", "f16b": "f16"}
MARGIN = 0.05
ALPHA = 0.05


def collect(root: Path, label: str, args: argparse.Namespace) -> Run:
    """The run labelled `label` under `root`: resumed if it is there, else made."""
    kept = sorted(p for p in root.glob(f"*-{label}") if (p / "manifest.json").exists())
    common = dict(threads=1, quiet=True, no_report=True, logprobs=True)
    if kept:
        ctxprobe.run(resume=str(kept[-1]), **common)  # type: ignore[arg-type]
        return load_run(kept[-1])
    result = ctxprobe.run(family="niah", lengths=args.lengths, depths=args.depths, samples=args.samples,  # type: ignore[arg-type]
                          label=label, kv_cache_type=KV[label], results_dir=str(root), **common)
    return load_run(result.run_dir)


def p_answer(record) -> float | None:  # type: ignore[no-untyped-def]
    lp = record.logprobs
    return lp.p_answer if isinstance(lp, AnswerLogprobs) and record.score is not None else None


def paired_arrays(base: Run, cand: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(1 family, length, round = seed, pair = depth) differences, correctness and p_answer, of the pairs both
    runs scored with probabilities, and the candidate's prompt tokens per length's round; pairs per round."""
    pairs = [p for p in pair_runs(base, cand).pairs
             if p.base.score is not None and p.cand.score is not None
             and p_answer(p.base) is not None and p_answer(p.cand) is not None]
    lengths = sorted({p.base.sample.recipe.context_tokens for p in pairs})
    seeds = sorted({p.base.sample.recipe.seed for p in pairs})
    depths = sorted({p.base.sample.recipe.depth for p in pairs})
    shape = (1, len(lengths), len(seeds), len(depths))
    binary, cont = np.full(shape, np.nan), np.full(shape, np.nan)
    tokens = np.zeros((len(lengths), len(seeds)))
    for p in pairs:
        r = p.base.sample.recipe
        at = (0, lengths.index(r.context_tokens), seeds.index(r.seed), depths.index(r.depth))
        binary[at] = int(p.cand.score.correct) - int(p.base.score.correct)
        cont[at] = p_answer(p.cand) - p_answer(p.base)
        tokens[at[1], at[2]] += p.cand.response.prompt_tokens if p.cand.response and p.cand.response.prompt_tokens \
            else p.cand.sample.planned_tokens
    full = ~np.isnan(binary).any(axis=(0, 1, 3))  # rounds where every length has all its pairs
    return binary[:, :, full], cont[:, :, full], tokens[:, full], len(depths)


def decided(diff: np.ndarray, tokens: np.ndarray, continuous: bool) -> tuple[str, int, float]:
    """The replayed gate's verdict, the pairs the pooled row counted and the candidate's prompt tokens sent."""
    played = replay_gate(diff, MARGIN, ALPHA, continuous=continuous)
    pooled = played.rows[0][0]
    sent_tokens = sum(float(tokens[i, :int(k)].sum()) for i, k in enumerate(played.sent))
    return played.verdict, pooled.tally.n, sent_tokens


def gate_table(name: str, base: Run, cand: Run) -> None:
    binary, cont, tokens, per_round = paired_arrays(base, cand)
    n = binary.size
    print(f"\n{name}: {n} pairs ({binary.shape[1]} lengths x {binary.shape[2]} rounds x {per_round} depths), "
          f"margin {MARGIN:.0%}, alpha {ALPHA}")
    flat_b, flat_c = binary.ravel(), cont.ravel()
    print(f"  correctness: baseline-only {int((flat_b < 0).sum())}, candidate-only {int((flat_b > 0).sum())}, "
          f"mean diff {100 * flat_b.mean():+.1f} points")
    print(f"  p_answer: mean diff {100 * flat_c.mean():+.2f} points, sd {100 * flat_c.std(ddof=1):.2f}")
    print(f"  {'metric':<12} {'verdict':>9} {'pairs':>6} {'prompt tokens':>14}")
    figures = {}
    for metric, diff, continuous in (("correct", binary, False), ("p_answer", cont, True)):
        verdict, pairs, spent = decided(diff, tokens, continuous)
        figures[metric] = (verdict, spent)
        print(f"  {metric:<12} {verdict:>9} {pairs:>6} {spent:>14,.0f}")
    (vb, tb), (vc, tc) = figures["correct"], figures["p_answer"]
    if vc != "UNDECIDED" and tb:
        held = "" if vb != "UNDECIDED" else f" (the binary gate was still UNDECIDED after all {tb:,.0f})"
        print(f"  p_answer decided with {tc / tb:.0%} of the binary gate's prompt tokens{held}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, help="keep (and resume) the four runs here")
    ap.add_argument("--lengths", default="1k,2k")
    ap.add_argument("--depths", default="0:100:25")
    ap.add_argument("--samples", type=int, default=4, help="seeds per (length, depth)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.runs or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        runs = {label: collect(root, label, args) for label in KV}
        for label, run in runs.items():
            scored = [r for r in run.records if r.score is not None]
            ps = [p for p in map(p_answer, scored) if p is not None]
            print(f"{label:>5}: {len(scored)} scored, accuracy {sum(r.score.correct for r in scored) / len(scored):.1%}, "  # type: ignore[union-attr]
                  f"mean p_answer {sum(ps) / len(ps):.3f}" if ps else f"{label}: no answer probabilities")
        gate_table("q4_0 against f16", runs["f16"], runs["q4_0"])
        gate_table("f16 (a second engine) against f16", runs["f16"], runs["f16b"])
        out = root / "compare-kl"
        shown = subprocess.run([sys.executable, "-m", "ctxprobe.evals.cli", "compare", *(str(runs[k].dir) for k in ("f16", "q8_0", "q4_0")),
                                "--results-dir", str(out)], capture_output=True, text=True, check=False)
        table = shown.stdout
        print("\n" + table[table.find("KL at depth"):] if "KL at depth" in table else shown.stdout + shown.stderr)
        print(f"compare's outputs (the KL heatmaps among them): {sorted(out.glob('*/kl_heatmap_*.png'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
