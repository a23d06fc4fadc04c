"""Requests in flight at the server while ctxprobe runs at high concurrency.

Against the tests' fake vLLM (tests/runners/fake_engine.py, on 127.0.0.1) whose completions take a fixed
time (a prefill) and whose /tokenize calls take a few milliseconds (a busy server's tokenizer), a run of
`--concurrency N` should keep N completions in flight: prompts are built while others are out. The
haystack's token counts are warmed by a first run (as a nightly job's are, from its cache on disk) unless
`--cold`; the figures are those of the second run. Prints the peak and the time-weighted mean of completions in flight, the peak of
tokenize calls in flight, tokenize calls per sample, and the wall time.

    python benchmarks/bench_inflight.py [--concurrency 64] [--samples 64] [--depths 0,50,100]
                                        [--length 4k] [--prefill-s 0.5] [--tokenize-ms 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runners"))

from fake_engine import FakeEngine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--samples", type=int, default=64, help="samples per cell (each seed a sweep of its own: one lane)")
    ap.add_argument("--depths", default="0,50,100")
    ap.add_argument("--length", default="4k")
    ap.add_argument("--prefill-s", type=float, default=0.5, help="seconds each completion takes")
    ap.add_argument("--tokenize-ms", type=float, default=5.0, help="milliseconds each /tokenize call takes")
    ap.add_argument("--cold", action="store_true", help="measure the first run (every haystack unit counted)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CTXPROBE_CACHE"] = str(Path(tmp) / "cache")  # cold: every unit is counted by the server
        import ctxprobe

        run = dict(family="niah", lengths=args.length, depths=args.depths, samples=args.samples, quiet=True,
                   no_report=True, results_dir=str(Path(tmp) / "results"))
        if not args.cold:
            with FakeEngine("vllm", context_length=1 << 20) as warm:
                ctxprobe.run(endpoints=[warm.url], concurrency=args.concurrency, **run)  # type: ignore[arg-type]
        with FakeEngine("vllm", context_length=1 << 20, completion_delay_s=args.prefill_s,
                        tokenize_delay_s=args.tokenize_ms / 1000.0) as engine:
            samples: list[tuple[float, int]] = []
            stop = threading.Event()

            def watch() -> None:
                while not stop.is_set():
                    samples.append((time.monotonic(), engine.in_flight["completions"]))
                    time.sleep(0.005)

            watcher = threading.Thread(target=watch, daemon=True)
            started = time.monotonic()
            watcher.start()
            result = ctxprobe.run(endpoints=[engine.url], concurrency=args.concurrency, **run)  # type: ignore[arg-type]
            took = time.monotonic() - started
            stop.set()
            watcher.join()
            calls = len(engine.completion_calls())
            tokenize = engine.tokenize_calls
            peak, peak_tok = engine.peak_in_flight["completions"], engine.peak_in_flight["tokenize"]
    first = next((i for i, (_, n) in enumerate(samples) if n), 0)  # from the first request sent
    span = samples[first:]
    weighted = sum(n * (t1 - t0) for (t0, n), (t1, _) in zip(span, span[1:]))
    mean = weighted / max(span[-1][0] - span[0][0], 1e-9) if len(span) > 1 else 0.0
    print(f"samples {calls} (exit {int(result.exit_code)}), --concurrency {args.concurrency}, "
          f"{args.length} prompts, prefill {args.prefill_s} s, tokenize {args.tokenize_ms} ms, "
          f"{'cold' if args.cold else 'warm'} count cache")
    print(f"completions in flight: peak {peak}, mean {mean:.1f} (from the first request on)")
    print(f"tokenize calls: {tokenize} ({tokenize / max(calls, 1):.1f} per sample), peak {peak_tok} in flight")
    print(f"wall {took:.1f} s; the floor at full concurrency: "
          f"{-(-calls // args.concurrency) * args.prefill_s:.1f} s of prefill")


if __name__ == "__main__":
    main()
