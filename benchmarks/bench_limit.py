"""Requests the adaptive effective-length search uses vs the full fixed grid for the same decision,
on the real embedded engine at small lengths.

The full grid is the fixed grid with the same resolution (lengths spaced by --ratio from --min to --max,
snapped to 256) with every length sampled to the same cap: what a non-adaptive sweep must send to
place the drop within the same ratio at the same confidence. Target: adaptive <= 30% of the grid.

    python benchmarks/bench_limit.py --min 1k --max 4k --task niah:variant=single
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from ctxprobe.evals.limit.api import parse_task
from ctxprobe.evals.limit.search import LimitConfig
from ctxprobe.evals.limit.target import effective_length
from ctxprobe.evals.records.store import RunStore
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.build import token_counter
from ctxprobe.tasks.lengths import parse_length
from ctxprobe.tasks.token_counter import PACKAGED_MODEL


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min", default="1k")
    ap.add_argument("--max", default="4k")
    ap.add_argument("--task", action="append", help="FAMILY[:k=v,...]; repeat (default niah:variant=single)")
    ap.add_argument("--haystack", default="prose")
    ap.add_argument("--threshold", type=float, default=0.856)
    ap.add_argument("--max-samples", type=int, default=30)
    ap.add_argument("--batch", type=int, default=6)
    ap.add_argument("--ratio", type=float, default=1.25)
    args = ap.parse_args()

    lo, hi = parse_length(args.min), parse_length(args.max)
    tasks = [parse_task(t) for t in (args.task or ["niah:variant=single"])]
    search = LimitConfig(
        min_length=lo,
        max_length=hi,
        threshold=args.threshold,
        max_samples=args.max_samples,
        batch=args.batch,
        ratio=args.ratio,
    )
    spec = f"local:{PACKAGED_MODEL}"
    counter = token_counter(spec)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedEngine(n_ctx=hi + 512) as engine:
        result = effective_length(engine.endpoint_config(), counter, RunStore(Path(tmp)), tasks, search, args.haystack)
    elapsed = time.monotonic() - started
    print(f"tasks: {', '.join(f'{t.family} {t.params}' for t in tasks)}; haystack {args.haystack}")
    print(
        f"search: {lo:,}..{hi:,} tokens, threshold {args.threshold}, cap {args.max_samples}/length, "
        f"batch {args.batch}, ratio {args.ratio}"
    )
    for row in result.lengths:
        acc = "-" if row.accuracy is None else f"{row.accuracy:.2f}"
        print(
            f"  {row.length:>7,}  acc {acc:>4}  n {row.n:>3}  CI [{row.lo:.2f}, {row.hi:.2f}]  {row.verdict}"
            f"{'' if row.settled else ' (at cap)'}"
        )
    print(f"verdict: {result.verdict}")
    share = result.requests / result.full_grid_requests
    print(
        f"requests: adaptive {result.requests}, full grid {result.full_grid_requests} "
        f"({result.full_grid_lengths} lengths x {args.max_samples}); adaptive/grid = {share:.1%}  "
        f"[{'PASS' if share <= 0.30 else 'FAIL'} target <= 30%]"
    )
    print(f"wall time {elapsed:,.0f} s on the embedded engine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
