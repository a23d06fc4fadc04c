"""Requests in flight at the server while ctxprobe runs at high concurrency, for a few numbers of depth sweeps.

Against the tests' fake vLLM (tests/runners/fake_engine.py, on 127.0.0.1, in a process of its own so that
its threads do not share the client's interpreter lock) whose completions take a fixed time (a prefill)
and whose /tokenize calls take a few milliseconds (a busy server's tokenizer), a run of `--concurrency N`
should keep N completions in flight: prompts are built while others are out, and with fewer depth sweeps
than lanes the cache-aware order fans each sweep out once its deepest sample is served.
Each sweep count is run twice in one count cache: cold (every haystack unit counted by the server), then
warm (the counts on disk, as a nightly job's are; a new engine, so nothing is remembered in memory). Prints,
per run, the peak and the time-weighted mean of completions in flight (from the first request sent to the
last answered), tokenize calls per sample, the wall time, and the run's `order_detail` where it has one.

    python benchmarks/bench_inflight.py [--concurrency 64] [--sweeps 40,88] [--depths 0,50,100]
                                        [--length 4k] [--prefill-s 0.5] [--tokenize-ms 5] [--runs cold,warm]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runners"))

from fake_engine import FakeEngine


def serve(args: argparse.Namespace) -> None:
    """The fake engine, in a process of its own (its threads never share the client's interpreter lock): prints
    its URL, samples its completions in flight every 5 ms, answers GET /bench/stats, and ends when stdin closes."""
    seen: list[tuple[float, int]] = []

    def stats(engine: FakeEngine, _body: Any) -> tuple[int, dict[str, Any]]:
        busy = [i for i, (_, n) in enumerate(seen) if n]
        span = seen[busy[0] : busy[-1] + 1] if busy else []  # from the first request sent to the last answered
        weighted = sum(n * (t1 - t0) for (t0, n), (t1, _) in itertools.pairwise(span))
        sending = span[-1][0] - span[0][0] if len(span) > 1 else 0.0
        return 200, dict(
            calls=len(engine.completion_calls()),
            peak=engine.peak_in_flight["completions"],
            mean=weighted / sending if sending else 0.0,
            sending=sending,
            tokenize=engine.tokenize_calls,
            peak_tokenize=engine.peak_in_flight["tokenize"],
        )

    with FakeEngine(
        "vllm",
        context_length=1 << 20,
        completion_delay_s=args.prefill_s,
        tokenize_delay_s=args.tokenize_ms / 1000.0,
        routes={("GET", "/bench/stats"): stats},
    ) as engine:

        def watch() -> None:
            while True:
                seen.append((time.monotonic(), engine.in_flight["completions"]))
                time.sleep(0.005)

        threading.Thread(target=watch, daemon=True).start()
        print(engine.url, flush=True)
        sys.stdin.read()


def measured_run(args: argparse.Namespace, sweeps: int, results: Path) -> dict[str, Any]:
    """One run of `sweeps` sweeps against a slow fake engine in a process of its own."""
    import ctxprobe

    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            "--prefill-s",
            str(args.prefill_s),
            "--tokenize-ms",
            str(args.tokenize_ms),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdin is not None
        url = server.stdout.readline().strip()
        started = time.monotonic()
        result = ctxprobe.run(
            endpoints=[url],
            concurrency=args.concurrency,
            family="niah",  # type: ignore[arg-type]
            lengths=args.length,
            depths=args.depths,
            samples=sweeps,
            quiet=True,
            no_report=True,
            results_dir=str(results),
        )
        took = time.monotonic() - started
        with urllib.request.urlopen(f"{url}/bench/stats", timeout=30) as reply:
            measured: dict[str, Any] = json.load(reply)
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)
    detail = getattr(result.manifest, "order_detail", None)
    return {
        **measured,
        "exit": int(result.exit_code),
        "wall": took,
        "detail": detail.model_dump() if detail is not None else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--sweeps", default="40,88", help="numbers of sweeps to run (samples per cell: each seed a sweep)")
    ap.add_argument("--depths", default="0,50,100")
    ap.add_argument("--length", default="4k")
    ap.add_argument("--prefill-s", type=float, default=0.5, help="seconds each completion takes")
    ap.add_argument("--tokenize-ms", type=float, default=5.0, help="milliseconds each /tokenize call takes")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the fake engine's own process
    ap.add_argument(
        "--runs",
        default="cold,warm",
        help="which runs to measure: cold, warm or both (warm alone: the "
        "count cache is filled first by a run against a fast engine, not measured)",
    )
    args = ap.parse_args()
    if args.serve:
        return serve(args)
    runs = [r for r in args.runs.split(",") if r in ("cold", "warm")]

    print(
        f"--concurrency {args.concurrency}, {args.length} prompts, depths {args.depths}, prefill {args.prefill_s} s, "
        f"tokenize {args.tokenize_ms} ms"
    )
    for sweeps in (int(s) for s in args.sweeps.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["CTXPROBE_CACHE"] = str(Path(tmp) / "cache")  # a count cache of this sweep count's own
            if runs == ["warm"]:
                fast = argparse.Namespace(**{**vars(args), "prefill_s": 0.0, "tokenize_ms": 0.0})
                measured_run(fast, sweeps, Path(tmp) / "warm-up")
            for cache in runs:
                m = measured_run(args, sweeps, Path(tmp) / cache)
                floor = -(-m["calls"] // args.concurrency) * args.prefill_s
                print(
                    f"{sweeps} sweeps, {cache}: {m['calls']} samples (exit {m['exit']}); completions in flight: "
                    f"peak {m['peak']}, mean {m['mean']:.1f} over {m['sending']:.1f} s of sending; tokenize calls "
                    f"{m['tokenize']} ({m['tokenize'] / max(m['calls'], 1):.1f} per sample, peak {m['peak_tokenize']} "
                    f"in flight); wall {m['wall']:.1f} s (prefill floor at full concurrency {floor:.1f} s)"
                )
                if m["detail"] is not None:
                    print(f"    order_detail {m['detail']}")


if __name__ == "__main__":
    main()
