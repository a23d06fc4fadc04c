"""How many chains the gates need to tell an equal build from a degraded one, on the real embedded engine
(llama.cpp's server, Gemma 3 270M), in the nested layout.

Three builds of the same prompts (niah, 1K-4K x depths 0:100:25, nested, `--logprobs`): the baseline with the
full SWA cache, an equal build with the window-sized SWA cache (the same arithmetic; only what the cache keeps
differs) and a degraded build with a q4_0 KV cache; the baseline keeps the default cache-path control, whose
checks measure the noise floor the KL margin is set from. Each is run in chunks of seeds, one run per chunk
(`<build>-s<first seed>` under `--runs`, resumed or made where missing), so that a run cut short still leaves
every build with the same chains. For each number of chains k (the first k seeds), both candidates are held
against the baseline by `compare`'s own gates: `--metric kl` at the default margin and `--fail-if-drop`
(accuracy); printed: each gate's verdict and its primary row's interval.

Then the chains each gate needs, projected from the chains measured: k chains drawn with replacement from the
measured ones (each chain's pairs kept together: a chain is the gate's unit), judged by the same gate functions
(`kl_gate.judge_rows`; for accuracy the chains' betting interval, `betting_cs`, whose lower bound must clear
-margin), at each k the share of draws that PASS and that FAIL; accuracy also centred on a true difference of 0
(an equal build's), with the chains' measured spread. The published count: the fewest k at which the equal
build PASSes both gates (accuracy centred) and q4_0 FAILs the KL gate in at least `SURE` of the draws.

    python benchmarks/bench_equal_build.py --runs DIR [--seeds 16] [--chunk 2] [--threads 1] [--no-run]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import replace
from pathlib import Path

import ctxprobe
from ctxprobe.evals.compare.api import compare_runs
from ctxprobe.evals.compare.clusters import cluster_of
from ctxprobe.evals.compare.paired import kl_gate
from ctxprobe.evals.compare.paired.kl import pair_kl
from ctxprobe.evals.compare.paired.pairing import pair_runs
from ctxprobe.evals.compare.paired.verdict import gate_cases
from ctxprobe.evals.compare.sequential.betting import PairedValues, betting_cs
from ctxprobe.evals.records.load import Run, load_run

BASELINE = "full"
BUILDS = {
    "full": {"swa_cache": "full", "kv_cache_type": "f16"},
    "window": {"swa_cache": "window", "kv_cache_type": "f16", "cache_check": "off"},
    "q4_0": {"swa_cache": "full", "kv_cache_type": "q4_0", "cache_check": "off"},
}
GRID = {"family": "niah", "lengths": "1k,2k,4k", "depths": "0:100:25", "layout": "nested"}
FAIL_IF_DROP = 0.05
ALPHA = 0.05
PROJECTED = (2, 4, 6, 8, 16, 32, 48, 56, 64, 72, 96, 128, 160, 192, 256, 384, 512)
SURE = 0.9  # the published count: the fewest chains where each verdict comes in at least this share of draws
DRAWS = 200


def chunk_run(root: Path, build: str, seed: int, chunk: int, threads: int, make: bool) -> Run | None:
    """The run of `build` over seeds seed..seed+chunk-1: resumed if kept unfinished, made if missing (`make`)."""
    label = f"{build}-s{seed}"
    kept = sorted(p for p in root.glob(f"*-{label}") if (p / "manifest.json").exists())
    common = {"threads": threads, "quiet": True, "no_report": True, "logprobs": True}
    if kept and load_run(kept[-1]).manifest.status == "finished":
        return load_run(kept[-1])
    if not make:
        return None
    if kept:
        ctxprobe.run(resume=str(kept[-1]), **common)  # type: ignore[arg-type]
        return load_run(kept[-1])
    result = ctxprobe.run(
        **GRID,
        samples=chunk,
        seed=seed,
        label=label,  # type: ignore[arg-type]
        results_dir=str(root),
        **BUILDS[build],
        **common,
    )
    return load_run(result.run_dir)


def collect(root: Path, seeds: int, chunk: int, threads: int, make: bool) -> dict[str, Run]:
    """Each build's chunks as one run (the first chunk's manifest, every chunk's records), over the chunks that
    every build has finished."""
    chunks: dict[str, list[Run]] = {b: [] for b in BUILDS}
    for seed in range(0, seeds, chunk):
        runs = {b: chunk_run(root, b, seed, chunk, threads, make) for b in BUILDS}
        if any(r is None for r in runs.values()):
            break
        for b, r in runs.items():
            chunks[b].append(r)  # type: ignore[arg-type]
    if not chunks[BASELINE]:
        sys.exit(f"no chunk of every build under {root} (run without --no-run to make them)")
    return {b: replace(rs[0], records=[rec for r in rs for rec in r.records]) for b, rs in chunks.items()}


def first_chains(run: Run, k: int) -> Run:
    """The run's records of its first k seeds."""
    seeds = sorted({r.sample.recipe.seed for r in run.records})[:k]
    return replace(run, records=[r for r in run.records if r.sample.recipe.seed in seeds])


def primary(result: object) -> str:
    """The verdict and the primary row's interval of a gated comparison."""
    case = next(c for c in gate_cases(result) if c.primary)  # type: ignore[arg-type]
    bounds = (
        f"[{max(case.diff_lo, 0.0):.4f}, {case.diff_hi:.4f}] nats"
        if case.metric == "kl"
        else f"[{100 * case.diff_lo:+.0f}, {100 * case.diff_hi:+.0f}] points"
    )
    return f"{result.verdict:<9} {bounds}"  # type: ignore[attr-defined]


def measured(runs: dict[str, Run], margin: float) -> None:
    """Each candidate's gates at each number of chains measured."""
    seeds = len({r.sample.recipe.seed for r in runs[BASELINE].records})
    print(f"gates at the first k chains (KL margin {margin:g} nats, --fail-if-drop {FAIL_IF_DROP:g}, alpha {ALPHA:g})")
    for k in range(1, seeds + 1):
        base = first_chains(runs[BASELINE], k)
        for cand in (b for b in BUILDS if b != BASELINE):
            other = first_chains(runs[cand], k)
            kl = compare_runs(base, [other], ALPHA, metric="kl", kl_margin=margin)
            acc = compare_runs(base, [other], ALPHA, fail_if_drop=FAIL_IF_DROP)
            print(f"  k={k:<3} {cand:<7} kl: {primary(kl)}   accuracy: {primary(acc)}")


def chain_values(base: Run, cand: Run) -> list[tuple[list[float], float]]:
    """Each chain's pairs' KL and its mean accuracy difference (candidate minus baseline)."""
    by_chain: dict[str, tuple[list[float], list[float]]] = {}
    for p in pair_runs(base, cand).pairs:
        kls, diffs = by_chain.setdefault(cluster_of(p.base), ([], []))
        kl = pair_kl(p.base, p.cand, p.same_prompt)
        if kl is not None:
            kls.append(kl)
        right = [bool(r.score and r.score.correct) for r in (p.base, p.cand)]
        diffs.append(float(right[1]) - float(right[0]))
    return [(kls, sum(diffs) / len(diffs)) for kls, diffs in by_chain.values()]


def identical(margin: float) -> None:
    """The fewest chains on which each gate PASSes a build identical to its baseline (every pair's KL 0, no
    answer flipped): the floor the gates' bounded bets set, whatever the engine."""
    kl = next(
        k
        for k in range(1, 1000)
        if kl_gate.judge_rows([(True, [0.0] * k)], margin, ALPHA, [[str(i) for i in range(k)]])[0].verdict == "PASS"
    )
    acc = next(k for k in range(1, 1000) if betting_cs(PairedValues((0.0,) * k))[0] > -FAIL_IF_DROP)
    print(f"an identical build PASSes kl from {kl} chains and accuracy (--fail-if-drop {FAIL_IF_DROP:g}) from {acc}")


def accuracy_passes(diffs: list[float]) -> bool:
    """Whether chains with these accuracy differences PASS `--fail-if-drop`: their betting interval's lower
    bound above -margin, as `compare` judges a fixed nested run's pooled row."""
    return betting_cs(PairedValues(tuple(diffs)))[0] > -FAIL_IF_DROP


def projected(runs: dict[str, Run], margin: float, seed: int = 0) -> None:
    """Each gate's PASS and FAIL shares over draws of k measured chains, per candidate. Accuracy is also drawn
    centred (each chain's difference less their mean): an equal build's true difference is 0, and a few
    chains' mean is mostly the luck of which answers flipped; the published count reads the centred draws."""
    rng = random.Random(seed)
    print(f"projected from the measured chains ({DRAWS} draws of k chains each, with replacement): PASS / FAIL")
    shares: dict[str, dict[int, tuple[float, float, float]]] = {}
    for cand in (b for b in BUILDS if b != BASELINE):
        chains = chain_values(runs[BASELINE], runs[cand])
        means = [sum(kls) / len(kls) for kls, _ in chains if kls]
        diffs = [d for _, d in chains]
        centre = sum(diffs) / len(diffs)  # centred: the chains' spread about a true difference of 0
        print(
            f"  {cand}: {len(chains)} chains measured; chain mean KL {min(means):.4f}-{max(means):.4f} nats "
            f"(mean {sum(means) / len(means):.4f}); chain accuracy difference {100 * min(diffs):+.0f} to "
            f"{100 * max(diffs):+.0f} points (mean {100 * sum(diffs) / len(diffs):+.1f})"
        )
        for k in PROJECTED:
            kl_v, acc_v, centred_v = [], [], []
            for _ in range(DRAWS):
                drawn = [rng.choice(chains) for _ in range(k)]
                kls = [v for kls_, _ in drawn for v in kls_]
                ids = [str(i) for i, (kls_, _) in enumerate(drawn) for _ in kls_]
                kl_v.append(kl_gate.judge_rows([(True, kls)], margin, ALPHA, [ids])[0].verdict)
                acc_v.append(accuracy_passes([d for _, d in drawn]))
                centred_v.append(accuracy_passes([d - centre for _, d in drawn]))
            share = (kl_v.count("PASS") / DRAWS, kl_v.count("FAIL") / DRAWS, centred_v.count(True) / DRAWS)
            shares.setdefault(cand, {})[k] = share
            print(
                f"    k={k:<4} kl {share[0]:4.0%} / {share[1]:4.0%}   accuracy {acc_v.count(True) / DRAWS:4.0%} "
                f"PASS (centred {share[2]:4.0%})"
            )
    both = next(
        (
            k
            for k in PROJECTED
            if min(shares["window"][k][0], shares["window"][k][2]) >= SURE and shares["q4_0"][k][1] >= SURE
        ),
        None,
    )
    kl_only = next((k for k in PROJECTED if shares["window"][k][0] >= SURE and shares["q4_0"][k][1] >= SURE), None)
    print(
        f"chains where window PASSes both gates and q4_0 FAILs kl in at least {SURE:.0%} of draws: "
        f"{both or f'more than {PROJECTED[-1]}'}; window PASSes kl and q4_0 FAILs it: {kl_only or '-'}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="folder the chunk runs are kept in (resumed, made where missing)")
    ap.add_argument("--seeds", type=int, default=16, help="chains per build")
    ap.add_argument("--chunk", type=int, default=2, help="seeds per run")
    ap.add_argument("--threads", type=int, default=1, help="engine threads")
    ap.add_argument("--margin", type=float, default=kl_gate.KL_MARGIN, help="KL margin in nats")
    ap.add_argument("--no-run", action="store_true", help="read the kept chunks only; make none")
    args = ap.parse_args()
    runs = collect(Path(args.runs), args.seeds, args.chunk, args.threads, not args.no_run)
    measured(runs, args.margin)
    identical(args.margin)
    projected(runs, args.margin)


if __name__ == "__main__":
    main()
