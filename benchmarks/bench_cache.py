"""Prefix-cache use of a depth sweep on the real embedded engine (llama.cpp's server), in the suite's
listed order and in ctxprobe's cache-aware order. Each order runs on a freshly started engine (an empty
cache), one slot, one request at a time. Prints, per order, the share of prompt tokens the server reported
as cached and the prefill seconds (time to first token, summed), their ratio, and the theoretical bound
of the sweep for a one-slot cache. Target: cache-aware share >= 90% of the bound.

    python benchmarks/bench_cache.py                      # 11 depths x 2 lengths x 2 seeds, niah single
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.loop import run_recipes
from ctxprobe.evals.run.send.order import Order, expected_cached_tokens, send_groups
from ctxprobe.runners.endpoint import EndpointClient
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import PACKAGED_MODEL


def run_order(suite: Suite, order: Order, n_ctx: int, swa_cache: str) -> tuple[list[SampleRecord], float]:
    counter = token_counter(f"local:{PACKAGED_MODEL}")
    builder = builder_for(counter)
    recipes = suite.recipes(builder.recipe_tokenizer, default_mode="completions")
    with tempfile.TemporaryDirectory() as tmp, EmbeddedEngine(n_ctx=n_ctx, swa_cache=swa_cache) as engine:
        store = RunStore(Path(tmp))
        config = engine.endpoint_config(concurrency=1)
        started = time.monotonic()

        async def go() -> None:
            async with EndpointClient(config) as client:
                await run_recipes(recipes, client, store, concurrency=1, counter=counter, order=order)

        asyncio.run(go())
        wall = time.monotonic() - started
        store.close()
        return list(store.latest_records().values()), wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="1k,2k")
    ap.add_argument("--depths", default="0:100:10")
    ap.add_argument("--samples", type=int, default=2, help="seeds per (length, depth)")
    ap.add_argument(
        "--swa-cache",
        choices=("full", "window"),
        default="full",
        help="the engine's sliding-window KV cache (window: llama-server's default)",
    )
    args = ap.parse_args()
    suite = Suite.model_validate(
        {
            "name": "bench-cache",
            "lengths": args.lengths,
            "depths": args.depths,
            "samples": args.samples,
            "tasks": [{"family": "niah"}],
        }
    )
    n_ctx = max(suite.lengths) + 512
    listed = suite.recipes(lambda mode: "x")
    total, bound = expected_cached_tokens(send_groups(listed, "cache-aware"))
    bound_share = bound / total
    print(
        f"sweep: niah single, lengths {args.lengths}, depths {args.depths} ({len(suite.depths)}), "
        f"{args.samples} seeds: {len(listed)} samples; engine n_ctx {n_ctx}, one slot, concurrency 1, "
        f"sliding-window cache {args.swa_cache}"
    )
    shares: dict[str, float] = {}
    prefill: dict[str, float] = {}
    for order in ("as-listed", "cache-aware"):
        records, wall = run_order(suite, order, n_ctx, args.swa_cache)  # type: ignore[arg-type]
        seen = [r.response for r in records if r.response is not None]
        prompt = sum(r.prompt_tokens or 0 for r in seen)
        cached = sum(r.cached_tokens or 0 for r in seen)
        shares[order] = cached / prompt if prompt else 0.0
        prefill[order] = sum(r.ttft_s or r.latency_s or 0.0 for r in seen)
        correct = sum(1 for r in records if r.score is not None and r.score.correct)
        print(
            f"{order:>12}: cached {cached:,} of {prompt:,} prompt tokens = {shares[order]:.1%}; "
            f"prefill (TTFT summed) {prefill[order]:.1f} s; wall {wall:.1f} s; {correct}/{len(records)} correct"
        )
    ratio = prefill["cache-aware"] / prefill["as-listed"] if prefill["as-listed"] else float("nan")
    print(f"prefill seconds cache-aware / as-listed = {ratio:.2f}")
    print(
        f"theoretical bound (one slot, each sample reusing the previous up to the shallower needle): "
        f"{bound_share:.1%} of prompt tokens"
    )
    goal = 0.9 * bound_share
    verdict = "PASS" if shares["cache-aware"] >= goal else "FAIL"
    print(f"target: cache-aware share >= 90% of the bound ({goal:.1%}): {shares['cache-aware']:.1%}  [{verdict}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
