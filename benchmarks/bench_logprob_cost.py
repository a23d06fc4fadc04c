"""What answer probabilities cost on the embedded engine (llama.cpp serving Gemma 3 270M): the same niah grid
run with `--no-logprobs` and with logprobs (the default), one engine started for each, side by side.

    python benchmarks/bench_logprob_cost.py [--lengths 1k,2k] [--depths 0,50,100] [--samples 1]

Prints per run: wall seconds, prompt tokens the engine computed (llamacpp:prompt_tokens_total over the run)
and served from its cache; for the logprob run the samples measured by method, the extra requests per sample
and their prompt tokens (sent, mostly cached), and whether every answer and score equals the other run's.
Target: the extra prefill the engine computes stays under 1 % of the run's, and no answer changes."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ctxprobe
from ctxprobe.evals.log.load import load_run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1k,2k")
    parser.add_argument("--depths", default="0,50,100")
    parser.add_argument("--samples", type=int, default=1)
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, logprobs in (("off", False), ("on", True)):
            started = time.perf_counter()
            done = ctxprobe.run(family="niah", lengths=args.lengths, depths=args.depths, samples=args.samples,
                                logprobs=logprobs, quiet=True, no_report=True, results_dir=str(Path(tmp) / name))
            runs[name] = (time.perf_counter() - started, load_run(done.run_dir))
    for name, (seconds, run) in runs.items():
        metrics = run.manifest.engine_metrics or {}
        print(f"{name:>3}: {len(run.records)} samples in {seconds:.1f} s; prompt tokens computed "
              f"{metrics.get('prompt_tokens', float('nan')):,.0f}, from cache "
              f"{metrics.get('cached_prompt_tokens', float('nan')):,.0f}")
    on, off = runs["on"][1], runs["off"][1]
    totals = on.manifest.logprobs
    if totals is not None:
        n = max(totals.samples_measured, 1)
        print(f"logprobs: {totals.samples_measured} measured {totals.methods}, {totals.samples_unmeasured} not "
              f"measurable; extra requests {totals.extra_requests} ({totals.extra_requests / n:.2f} a sample), "
              f"their prompt tokens {totals.extra_prompt_tokens:,} ({totals.extra_prompt_tokens / n:,.0f} a sample)")
    computed = [(r[1].manifest.engine_metrics or {}).get("prompt_tokens", 0.0) for r in (runs["off"], runs["on"])]
    if computed[0]:
        print(f"extra prefill computed: {computed[1] - computed[0]:,.0f} tokens "
              f"({100 * (computed[1] - computed[0]) / computed[0]:.2f} % of the run without logprobs)")
    twins = {r.sample.sample_id: r for r in off.records}
    same = all(r.response is not None and twins[r.sample.sample_id].response is not None
               and r.response.text == twins[r.sample.sample_id].response.text  # type: ignore[union-attr]
               and r.score == twins[r.sample.sample_id].score for r in on.records)
    print(f"answers and scores identical: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
