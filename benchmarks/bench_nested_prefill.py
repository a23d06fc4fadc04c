"""What a nightly prefills: the nested layout against the independent one on the embedded engine, then the nested
layout behind vllm-router over two engines, with and without the session header, and with round_robin.

    python benchmarks/bench_nested_prefill.py                     # niah single, 1K-4K x depths 0:100:25 x 2 seeds
    python benchmarks/bench_nested_prefill.py --lengths 1k,2k --depths 0:100:50 --no-router
    python benchmarks/bench_nested_prefill.py --only nested,header      # some rows only

Each configuration runs `ctxprobe run --endpoint URL` (completions, no log-probabilities) on freshly started
engines (empty caches), one slot each, and prints: prompt tokens sent, cached tokens the engines reported,
computed = sent - cached (what the engines prefilled; the engines' own `/metrics` counter beside it), the floor
(per chain its longest context plus every question: each context token prefilled once, from the nested
builder's `stream_tokens`) and computed / floor. Targets: nested on one engine <= 1.2 x floor; behind the
router with consistent_hash and the header <= 1.3 x floor with every chain on one worker. Without the header
(`--session-header none`) consistent_hash keys on each body, and round_robin alternates: the rows say what
is lost, and `missed` counts the requests after a chain's first that did not find the chain's stream in
the cache of the engine they reached. Under each row, the run's reuse lines (evals/run/reuse.py): its cached
tokens as a share of its layout's bound, and where short, the likely causes; the SWA-window rows and round_robin
must say so.

The router comes from the file $CTXPROBE_ROUTER_ENV names (.ci/router_env.sh writes it) or --router-env.
Where the nested builder is missing (it raises NotImplementedError), the nested rows end with one line saying
so and the independent row runs alone, without a floor."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.e2e.router.fleet

from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.reuse import measure_reuse, reuse_lines
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import PACKAGED_MODEL
from tests.e2e.router.fleet import (
    ENV_VAR,
    Router,
    RouterEnv,
    by_chain,
    counters_delta,
    engine_counters,
    prefill,
    read_records,
    read_router_env,
)

PROMPT_COUNTER = "llamacpp:prompt_tokens_total"
CONFIGS = (
    "nested",
    "nested-window",
    "independent",
    "independent-window",
    "header",
    "no-header",
    "round-robin",
)  # the rows, in the order they run
SLACK = 8  # tokens a cache hit may fall short of the shared stream


@dataclass(frozen=True)
class Config:
    short: str  # its name for --only
    name: str
    layout: str
    engines: int
    policy: str | None = None
    session_header: str | None = None  # None: ctxprobe's default (X-Session-ID)
    target: float | None = None
    swa_cache: str = "full"  # the engines' sliding-window cache (--swa-cache)


def grid_floor(lengths: str, depths: str, samples: int) -> int:
    """The floor of the nested grid, from the builder alone (no engine): per chain its longest stream plus what
    every cell adds past the stream. NotImplementedError where the nested builder is missing."""
    suite = Suite.model_validate(
        {
            "name": "bench-nested",
            "lengths": lengths,
            "depths": depths,
            "samples": samples,
            "layout": "nested",
            "tasks": [{"family": "niah"}],
        }
    )
    builder = builder_for(token_counter(f"local:{PACKAGED_MODEL}"))
    chains: dict[int, list[tuple[int, int]]] = {}
    for recipe in suite.recipes(builder.recipe_tokenizer, default_mode="completions"):
        sample = builder.build(recipe)
        chains.setdefault(recipe.seed, []).append((sample.planned_tokens, int(sample.measures["stream_tokens"])))
    return sum(max(s for _, s in cells) + sum(p - s for p, s in cells) for cells in chains.values())


def missed(records: Sequence[dict[str, Any]]) -> int | None:
    """Requests after a chain's first whose cached tokens fall short of the chain's stream sent so far (they
    reached an engine that did not hold it); None without streams (independent layout)."""
    count = 0
    for chain in by_chain(records).values():
        seen = 0
        for i, record in enumerate(chain):
            stream = record["sample"]["measures"].get("stream_tokens")
            if stream is None:
                return None
            if i and (record["response"]["cached_tokens"] or 0) < min(stream, seen) - SLACK:
                count += 1
            seen = max(seen, int(stream))
    return count


def run(config: Config, args: argparse.Namespace, router_env: RouterEnv | None, work: Path) -> dict[str, Any]:
    n_ctx = max(int(x.rstrip("kK")) * (1024 if x[-1] in "kK" else 1) for x in args.lengths.split(",")) + 512
    out = work / config.name.replace(" ", "_")
    started = time.monotonic()
    with ExitStack() as stack:
        engines = [
            stack.enter_context(
                EmbeddedEngine(
                    n_ctx=n_ctx,
                    model_alias=f"gemma-worker-{i}",
                    swa_cache=config.swa_cache,
                    log_path=out / f"engine-{i}.log",
                )
            )
            for i in range(config.engines)
        ]
        urls = [e.base_url for e in engines]
        router = None
        if config.policy is not None:
            assert router_env is not None
            router = stack.enter_context(Router(router_env, urls, config.policy, out / "router.log"))
        endpoint = router.base_url if router is not None else urls[0]
        before = {u: engine_counters(u) for u in urls}
        argv = [
            sys.executable,
            "-m",
            "ctxprobe.evals.cli.main",
            "run",
            "--endpoint",
            endpoint,
            "--family",
            "niah",
            "--lengths",
            args.lengths,
            "--depths",
            args.depths,
            "--samples",
            str(args.samples),
            "--layout",
            config.layout,
            "--mode",
            "completions",
            "--no-logprobs",
            "--no-report",
            "--quiet",
            "--cache-check",
            "off",
            "--timeout",
            str(args.timeout),
            "--allow-errors",
            "--results-dir",
            str(out / "results"),
        ]
        if config.session_header is not None:
            argv += ["--session-header", config.session_header]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(
                f"bench_nested_prefill: {config.name}: ctxprobe exited {done.returncode}: "
                f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}"
            )
        per_engine = [counters_delta(before[u], engine_counters(u))[PROMPT_COUNTER] for u in urls]
        routes = router.routes() if router is not None else []
    run_dir = next(p for p in (out / "results").iterdir() if p.is_dir())
    records = read_records(run_dir)
    header_workers: dict[str, set[str]] = {}
    for key, worker in routes:
        if key.startswith("header:"):
            header_workers.setdefault(key.rsplit(":", 1)[1], set()).add(worker)
    return {
        "config": config,
        "figures": prefill(records),
        "per_engine": per_engine,
        "missed": missed(records),
        "split_chains": sum(len(w) > 1 for w in header_workers.values()) if header_workers else None,
        "wall_s": time.monotonic() - started,
        "reuse": reuse_of(run_dir, config),
    }


def reuse_of(run_dir: Path, config: Config) -> list[str]:
    """The run's reuse lines, as `ctxprobe run` prints them (its manifest's `reuse`; measured from the folder
    where the manifest has none)."""
    store = RunStore(run_dir)
    manifest = store.load_manifest()
    engine = manifest.engine.engine if manifest.engine is not None else None
    record = manifest.reuse or measure_reuse(
        list(store.latest_records().values()), manifest.order_detail, manifest.engine_metrics, engine
    )
    header = "none" if config.session_header == "none" else "X-Session-ID"
    return reuse_lines(record, engine, header) if record is not None else ["reuse: no reply said its cached tokens"]


def show(row: dict[str, Any], floor: int | None) -> str:
    config, f = row["config"], row["figures"]
    ratio = f"{f.computed / floor:.2f}" if floor else "-"
    verdict = ""
    if config.target is not None and floor:
        verdict = "  ok" if f.computed <= config.target * floor else f"  ABOVE target {config.target}"
    engines = "+".join(f"{int(x)}" for x in row["per_engine"])
    missed_ = "-" if row["missed"] is None else str(row["missed"])
    split = "" if row["split_chains"] is None else f"  chains split {row['split_chains']}"
    return (
        f"{config.name:<34} {f.samples:>4} {f.sent:>8} {f.cached:>8} {f.computed:>8} {engines:>13} "
        f"{floor or '-':>7} {ratio:>6} {missed_:>6} {row['wall_s']:>6.0f}{split}{verdict}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="1k,2k,4k")
    ap.add_argument("--depths", default="0:100:25")
    ap.add_argument("--samples", type=int, default=2, help="seeds (chains) per task")
    ap.add_argument(
        "--router-env", default=os.environ.get(ENV_VAR), help=f"the file .ci/router_env.sh writes (default: ${ENV_VAR})"
    )
    ap.add_argument("--no-router", action="store_true", help="only the single-engine rows")
    ap.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="each request's deadline, seconds (a loaded "
        "machine prefills slowly; a request past it is an error the row leaves out)",
    )
    ap.add_argument("--keep", default=None, help="keep the run folders under this folder (default: a temporary one)")
    ap.add_argument("--only", default="", help=f"only these rows: {','.join(CONFIGS)} (default: all)")
    args = ap.parse_args()
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if only - set(CONFIGS):
        ap.error(f"--only: unknown row {', '.join(sorted(only - set(CONFIGS)))} (known: {', '.join(CONFIGS)})")

    try:
        floor: int | None = grid_floor(args.lengths, args.depths, args.samples)
        nested = True
    except NotImplementedError as err:
        print(
            f"bench_nested_prefill: the nested layout cannot be built here ({err}): merge the nested builder; "
            "the independent layout runs alone, without a floor",
            file=sys.stderr,
        )
        floor, nested = None, False

    router_env: RouterEnv | None = None
    if not args.no_router:
        if args.router_env:
            os.environ[ENV_VAR] = args.router_env
        found = read_router_env()
        if isinstance(found, str):
            print(f"bench_nested_prefill: no router rows: {found}", file=sys.stderr)
        else:
            router_env = found

    configs = [
        Config("independent", "one engine, independent", "independent", 1),
        Config("independent-window", "one engine, independent, SWA window", "independent", 1, swa_cache="window"),
    ]
    if nested:
        configs[:0] = [
            Config("nested", "one engine, nested", "nested", 1, target=1.2),
            Config("nested-window", "one engine, nested, SWA window", "nested", 1, target=1.2, swa_cache="window"),
        ]
        if router_env is not None:
            configs += [
                Config("header", "router consistent_hash + header", "nested", 2, "consistent_hash", target=1.3),
                Config(
                    "no-header",
                    "router consistent_hash, no header",
                    "nested",
                    2,
                    "consistent_hash",
                    session_header="none",
                ),
                Config("round-robin", "router round_robin", "nested", 2, "round_robin"),
            ]
    configs = [c for c in configs if not only or c.short in only]
    print(
        f"niah single, lengths {args.lengths}, depths {args.depths}, {args.samples} seeds; completions, "
        f"one slot per engine" + (f"; vllm-router {router_env.version}" if router_env else "")
    )
    print(
        f"{'configuration':<34} {'n':>4} {'sent':>8} {'cached':>8} {'computed':>8} {'engines':>13} "
        f"{'floor':>7} {'x floor':>6} {'missed':>6} {'wall s':>6}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-nested-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        for config in configs:
            row = run(config, args, router_env, work)
            print(show(row, floor), flush=True)
            for line in row["reuse"]:
                print(f"    {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
