"""Building a 1M-token prompt: ctxprobe's cached per-unit token counts against RULER's re-tokenizing search.

With the real local tokenizer (`local:gemma3-270m`), one `niah` sample of `--tokens` tokens (default
1,000,000: "1M" is taken as 1,000,000, not 1,048,576) is built on the `--haystack` haystack (default prose):

- cold: a fresh process with an empty cache folder (first use of that haystack with that tokenizer; the
  tokenizer load then includes building it from the GGUF's vocabulary, once per cache folder):
  build_sample counts every haystack unit it needs once.
- warm: a fresh process on the same cache folder (counts read from disk), then a second build of another
  depth and seed in that same process.
- tokenizer pass: the same ~N tokens of haystack text tokenized once, as one string (in each cold process
  right after its build, so that a busy machine slows both alike).
- RULER-style: RULER's binary search over the number of haystack units, tokenizing the whole prompt
  (units, needle at the depth, question) at every probe, until the bounds meet.

    python benchmarks/bench_build.py [--tokens 1000000] [--haystack prose] [--rounds 3] [--ruler-probes-cap N]

Prints seconds (medians over the rounds) and peak RSS, the ratios, PASS/FAIL for each target, and the
built prompt's real token count against the target.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import build_sample, builder_for
from ctxprobe.tasks.count_cache import UnitCounts
from ctxprobe.tasks.haystack import make_haystack
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.token_counter import (
    PACKAGED_MODEL,
    TokenCounter,
    count,
    make_token_counter,
    packaged_gguf,
)

COUNTER = f"local:{PACKAGED_MODEL}"
DEPTH, SEED = 50.0, 0
SECOND_DEPTH, SECOND_SEED = 25.0, 1
RULER_INCREMENTAL = 500  # RULER's step for its essay haystack: its tokens-per-unit estimate and lower bound
TARGETS = {"warm_s": 1.0, "cold_over_pass_s": 1.0, "ruler_over_cold": 10.0, "ruler_over_warm": 100.0, "rss_mb": 500.0}


def recipe(args: argparse.Namespace, counter: TokenCounter, depth: float = DEPTH, seed: int = SEED) -> Recipe:
    return builder_for(counter).recipe(
        family="niah", haystack=args.haystack, context_tokens=args.tokens, depth=depth, seed=seed
    )


def unit_counts(haystack: str, counter: TokenCounter) -> UnitCounts:
    return builder_for(counter).unit_counts(haystack)


# --- cold and warm builds (each in a fresh process) ------------------------------------------------------
def worker(args: argparse.Namespace) -> dict[str, Any]:
    """One build in this (fresh) process; `warm` adds a second build of another depth and seed."""
    started = time.perf_counter()
    counter = make_token_counter(COUNTER)
    load_s = time.perf_counter() - started
    counting = [0.0]
    count_many = counter.count_many

    def timed(texts: Any) -> list[int]:
        t = time.perf_counter()
        try:
            return count_many(texts)
        finally:
            counting[0] += time.perf_counter() - t

    # On the instance: the counter's type, hence its fingerprint and cache key, stay the same.
    counter.count_many = timed  # type: ignore[method-assign]
    started = time.perf_counter()
    sample = build_sample(recipe(args, counter), counter)
    result: dict[str, Any] = {
        "load_s": load_s,
        "build_s": time.perf_counter() - started,
        "count_s": counting[0],
        "sha256": sample.prompt_sha256,
    }
    counts = unit_counts(args.haystack, counter)
    result.update(units_counted=len(counts.counts), tokens_counted=int(counts.cumsum[-1]))
    if args.worker == "warm":
        started = time.perf_counter()
        build_sample(recipe(args, counter, SECOND_DEPTH, SECOND_SEED), counter)
        result["second_build_s"] = time.perf_counter() - started
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    if args.worker == "cold":  # the one-pass baseline, right after the build: under the same machine load
        text, result["pass_units"] = haystack_text(args, counts)
        started = time.perf_counter()
        result["pass_tokens"] = count_many([text])[0]
        result["pass_s"] = time.perf_counter() - started
    return result


def haystack_text(args: argparse.Namespace, counts: UnitCounts) -> tuple[str, int]:
    """The first haystack units that reach the target, as one string, and how many they are."""
    n = int(counts.cumsum.searchsorted(args.tokens))
    return "".join(make_haystack(args.haystack).units(0, n)), n


def run_worker(mode: str, cache: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", mode, "--tokens", str(args.tokens), "--haystack", args.haystack]
    done = subprocess.run(
        cmd, env={**os.environ, "CTXPROBE_CACHE": str(cache)}, capture_output=True, text=True, check=False
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{mode} build failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT ") :])  # type: ignore[no-any-return]


def empty_cache(folder: Path, gguf: Path) -> Path:
    """A cache folder with no token counts; the packaged GGUF is linked in, since assembling it is a
    one-time install step, not part of a first build on a haystack."""
    (folder / "models").mkdir(parents=True)
    (folder / "models" / gguf.name).symlink_to(gguf)
    return folder


# --- RULER-style: binary search over the number of units, tokenizing the whole prompt at every probe -------
@dataclass(frozen=True)
class Probe:
    units: int
    tokens: int
    seconds: float


def ruler_search(
    tokens_of: Callable[[int], int], lower: int, upper: int, target: int, cap: int | None = None
) -> list[Probe]:
    """RULER's search: the most units whose prompt fits the target, probing until the bounds meet."""
    probes: list[Probe] = []
    while lower <= upper and (cap is None or len(probes) < cap):
        mid = (lower + upper) // 2
        started = time.perf_counter()
        tokens = tokens_of(mid)
        probes.append(Probe(mid, tokens, time.perf_counter() - started))
        if tokens <= target:
            lower = mid + 1
        else:
            upper = mid - 1
    return probes


class RulerPrompt:
    """The prompt RULER would assemble from the first n units: head, units with the needle at the depth, tail."""

    def __init__(self, haystack_spec: str, counter: TokenCounter, depth: float, seed: int) -> None:
        family = get_family("niah")
        self.draft = family.draft(validate_params(family, {}), depth, "completions", random.Random(seed))
        self.haystack = make_haystack(haystack_spec)
        self.needle = self.haystack.wrap_needle(self.draft.needles[0].text)
        self.depth = depth
        self.counter = counter

    def text(self, n: int) -> str:
        units = self.haystack.units(0, n)
        at = round(self.depth / 100.0 * n)
        return "".join([self.draft.head, *units[:at], self.needle, *units[at:], self.draft.tail])

    def tokens(self, n: int) -> int:
        """Tokenize the whole prompt (plus the BOS the endpoint adds)."""
        return self.counter.bos_tokens + count(self.counter, self.text(n))

    def bounds(self, target: int) -> tuple[int, int]:
        """RULER's bounds: tokens per unit estimated from a prompt of `RULER_INCREMENTAL` units."""
        per_unit = self.tokens(RULER_INCREMENTAL) / RULER_INCREMENTAL
        return RULER_INCREMENTAL, max(int(target / per_unit * 3), 2 * RULER_INCREMENTAL)

    def cached_tokens(self, counts: UnitCounts) -> Callable[[int], int]:
        """The same prompt's length from the cached unit counts (no tokenizing), for the dry run."""
        frame = self.counter.bos_tokens + sum(self.counter.count_many([self.draft.head, self.needle, self.draft.tail]))

        def tokens(n: int) -> int:
            while len(counts.counts) < n:
                counts.ensure_tokens(int(counts.cumsum[-1]) + 1)
            return frame + int(counts.cumsum[n])

        return tokens


@dataclass(frozen=True)
class RulerResult:
    probes: list[Probe]
    probes_needed: int  # by the dry run with cached counts
    probes_to_tolerance: int  # a search that stops at the first probe within the tolerance
    bounds: tuple[int, int]
    seconds: float  # measured, or extrapolated when the probes were capped
    extrapolated: bool


def ruler_style(args: argparse.Namespace, counter: TokenCounter) -> RulerResult:
    prompt = RulerPrompt(args.haystack, counter, DEPTH, SEED)
    dry_counts = UnitCounts(prompt.haystack, counter)
    started = time.perf_counter()
    bounds = prompt.bounds(args.tokens)
    bounds_s = time.perf_counter() - started
    dry = ruler_search(prompt.cached_tokens(dry_counts), *bounds, args.tokens)
    low = args.tokens - tolerance(args.tokens)
    to_tolerance = next((i + 1 for i, p in enumerate(dry) if low <= p.tokens <= args.tokens), len(dry))
    started = time.perf_counter()
    probes = ruler_search(prompt.tokens, *bounds, args.tokens, cap=args.ruler_probes_cap)
    seconds = bounds_s + time.perf_counter() - started
    extrapolated = len(probes) < len(dry)
    if extrapolated:
        seconds = bounds_s + statistics.mean(p.seconds for p in probes) * len(dry)
    return RulerResult(probes, len(dry), to_tolerance, bounds, seconds, extrapolated)


# --- the report --------------------------------------------------------------------------------------------
def med(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def check(ok: bool, what: str, detail: str) -> bool:
    print(f"  {'PASS' if ok else 'FAIL'}  {what}: {detail}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="prompt length (default 1,000,000)")
    parser.add_argument("--haystack", default="prose", help="haystack spec (default prose)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs of cold and of warm")
    parser.add_argument(
        "--ruler-probes-cap",
        type=int,
        default=None,
        help="measure only this many RULER-style probes and extrapolate (default: all)",
    )
    parser.add_argument("--worker", choices=["cold", "warm"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1 or (args.ruler_probes_cap is not None and args.ruler_probes_cap < 1):
        parser.error("--rounds and --ruler-probes-cap must be at least 1")
    if args.worker:
        print("RESULT " + json.dumps(worker(args)), flush=True)
        return 0

    one_m = " (1M taken as 1,000,000, not 1,048,576)" if args.tokens == 1_000_000 else ""
    print(
        f"niah sample of {args.tokens:,} tokens{one_m} on haystack {args.haystack!r}, counter {COUNTER}; "
        f"medians of {args.rounds} rounds; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    gguf = packaged_gguf()
    with tempfile.TemporaryDirectory(prefix="ctxprobe-bench-") as root:
        caches = [empty_cache(Path(root) / f"cache{i}", gguf) for i in range(args.rounds)]
        cold = [run_worker("cold", cache, args) for cache in caches]
        warm = [run_worker("warm", caches[-1], args) for _ in range(args.rounds)]

        os.environ["CTXPROBE_CACHE"] = str(caches[-1])
        counter = make_token_counter(COUNTER)
        ruler = ruler_style(args, counter)
        sample = build_sample(recipe(args, counter), counter)  # from the cache: the prompt the workers built
        real = counter.bos_tokens + count(counter, sample.prompt)
    same_bytes = {r["sha256"] for r in cold + warm} == {sample.prompt_sha256}
    pass_runs = [r["pass_s"] for r in cold]
    pass_s = statistics.median(pass_runs)

    cold_s, warm_s, second_s = med(cold, "build_s"), med(warm, "build_s"), med(warm, "second_build_s")
    cold_rss, warm_rss = max(r["rss_mb"] for r in cold), max(r["rss_mb"] for r in warm)
    print(
        f"cold  fresh process, empty count cache   build {cold_s:6.2f} s  (counting units {med(cold, 'count_s'):.2f} s: "
        f"{cold[-1]['units_counted']:,} units, {cold[-1]['tokens_counted']:,} tokens)  "
        f"tokenizer load {med(cold, 'load_s'):.2f} s  peak RSS {cold_rss:.0f} MB"
    )
    print(f"      cold build runs: {', '.join(f'{s:.2f}' for s in (r['build_s'] for r in cold))} s")
    print(
        f"warm  fresh process, counts on disk      build {warm_s:6.2f} s  tokenizer load {med(warm, 'load_s'):.2f} s  "
        f"peak RSS {warm_rss:.0f} MB"
    )
    print(f"warm  same process, depth {SECOND_DEPTH:g} seed {SECOND_SEED}      build {second_s:6.2f} s")
    print(
        f"tokenizer pass: {cold[-1]['pass_units']:,} units as one string, {cold[-1]['pass_tokens']:,} tokens, "
        f"in each cold process after its build  {pass_s:6.2f} s  (runs: {', '.join(f'{s:.2f}' for s in pass_runs)})"
    )
    label = "EXTRAPOLATED" if ruler.extrapolated else "measured"
    per_probe = statistics.median(p.seconds for p in ruler.probes)
    print(
        f"RULER-style: units in [{ruler.bounds[0]:,}, {ruler.bounds[1]:,}], {ruler.probes_needed} probes until the "
        f"bounds meet (dry run with cached counts), {len(ruler.probes)} measured, median {per_probe:.2f} s per probe"
    )
    for p in ruler.probes:
        print(f"    {p.units:>9,} units  {p.tokens:>11,} tokens  {p.seconds:6.2f} s")
    if ruler.extrapolated:
        print(
            f"  EXTRAPOLATED: {ruler.probes_needed} probes x {statistics.mean(p.seconds for p in ruler.probes):.2f} s "
            f"(mean of the {len(ruler.probes)} measured) + the estimate"
        )
    print(
        f"RULER-style total {ruler.seconds:6.2f} s ({label}); a search stopping at the first probe within "
        f"tolerance would need {ruler.probes_to_tolerance} probes"
    )
    print(f"ratios: RULER-style / cold {ruler.seconds / cold_s:.1f}x, RULER-style / warm {ruler.seconds / warm_s:.0f}x")

    print("targets:")
    ok = [
        check(warm_s <= TARGETS["warm_s"], "warm build <= 1 s", f"{warm_s:.2f} s"),
        check(
            cold_s <= pass_s + TARGETS["cold_over_pass_s"],
            "cold build <= tokenizer pass + 1 s",
            f"{cold_s:.2f} s vs {pass_s + 1:.2f} s",
        ),
        check(
            ruler.seconds >= TARGETS["ruler_over_cold"] * cold_s,
            "RULER-style >= 10x cold",
            f"{ruler.seconds / cold_s:.1f}x ({label})",
        ),
        check(
            ruler.seconds >= TARGETS["ruler_over_warm"] * warm_s,
            "RULER-style >= 100x warm",
            f"{ruler.seconds / warm_s:.0f}x ({label})",
        ),
        check(cold_rss <= TARGETS["rss_mb"], "peak RSS <= 500 MB, cold", f"{cold_rss:.0f} MB"),
        check(warm_rss <= TARGETS["rss_mb"], "peak RSS <= 500 MB, warm", f"{warm_rss:.0f} MB"),
    ]
    low = args.tokens - tolerance(args.tokens)
    ok.append(
        check(
            low <= real <= args.tokens,
            "built prompt's real tokens in [target - tolerance, target]",
            f"{real:,} (BOS + prompt, tokenized once) in [{low:,}, {args.tokens:,}]; planned "
            f"{sample.planned_tokens:,}; same prompt bytes in every process: {'yes' if same_bytes else 'NO'}",
        )
    )
    return 0 if all(ok) and same_bytes else 1


if __name__ == "__main__":
    sys.exit(main())
