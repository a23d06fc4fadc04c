"""What answer probabilities cost on the embedded engine (llama.cpp serving Gemma 3 270M): the same niah grid
run with `--no-logprobs` and with logprobs (the default), each on a freshly started engine (cold: what a nightly
run of prompts sent once meets).

    python benchmarks/bench_logprob_cost.py [--lengths 1k,2k] [--depths 0,50,100] [--samples 1]

Prints per run: wall seconds, prompt tokens the engine computed (llamacpp:prompt_tokens_total over the run)
and served from its cache; for the logprob run the samples measured by method, the extra requests per sample
and their prompt tokens (sent, mostly cached), the prefill they added, and how many answers and scores differ
between the runs (the extra requests change the cache later samples find, which can reword an answer at a
near-tie: docs/ENGINES.md). Target: the extra prefill stays under 1 % of the run's, and no score changes."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ctxprobe
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.run.send.inline_suite import suite_for
from ctxprobe.evals.run.send.options import SuiteOptions
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.launchers.llama_cpp import default_n_ctx
from ctxprobe.tasks.suite import Suite


def _suite(args: argparse.Namespace) -> Suite:
    return suite_for(SuiteOptions(family="niah", lengths=args.lengths, depths=args.depths, samples=args.samples))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1k,2k")
    parser.add_argument("--depths", default="0,50,100")
    parser.add_argument("--samples", type=int, default=1)
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, logprobs in (("off", False), ("on", True)):
            with EmbeddedEngine(n_ctx=default_n_ctx(_suite(args))) as engine:
                started = time.perf_counter()
                done = ctxprobe.run(
                    endpoints=[engine.base_url],
                    mode="completions",
                    family="niah",
                    lengths=args.lengths,
                    depths=args.depths,
                    samples=args.samples,
                    logprobs=logprobs,
                    quiet=True,
                    no_report=True,
                    results_dir=str(Path(tmp) / name),
                )
                runs[name] = (time.perf_counter() - started, load_run(done.run_dir))
    for name, (seconds, run) in runs.items():
        metrics = run.manifest.engine_metrics or {}
        print(
            f"{name:>3}: {len(run.records)} samples in {seconds:.1f} s; prompt tokens computed "
            f"{metrics.get('prompt_tokens', float('nan')):,.0f}, from cache "
            f"{metrics.get('cached_prompt_tokens', float('nan')):,.0f}"
        )
    on, off = runs["on"][1], runs["off"][1]
    totals = on.manifest.logprobs
    if totals is not None:
        n = max(totals.samples_measured, 1)
        print(
            f"logprobs: {totals.samples_measured} measured {totals.methods}, {totals.samples_unmeasured} not "
            f"measurable; extra requests {totals.extra_requests} ({totals.extra_requests / n:.2f} a sample), "
            f"their prompt tokens {totals.extra_prompt_tokens:,} ({totals.extra_prompt_tokens / n:,.0f} a sample)"
        )
    computed = {name: (r[1].manifest.engine_metrics or {}).get("prompt_tokens", 0.0) for name, r in runs.items()}
    if computed["off"]:
        extra = computed["on"] - computed["off"]
        print(
            f"extra prefill computed: {extra:,.0f} tokens ({100 * extra / computed['off']:.2f} % of the "
            f"{computed['off']:,.0f} the run without logprobs computed)"
        )
    twins = {r.sample.sample_id: r for r in off.records}
    reworded = sum(
        1
        for r in on.records
        if r.response is not None
        and twins[r.sample.sample_id].response is not None
        and r.response.text != twins[r.sample.sample_id].response.text
    )  # type: ignore[union-attr]
    rescored = sum(1 for r in on.records if r.score != twins[r.sample.sample_id].score)
    print(f"answers reworded {reworded} of {len(on.records)}, scores changed {rescored}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
