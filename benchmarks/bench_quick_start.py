"""Seconds from `ctxprobe run --suite quick` starting to its table, on an idle machine and on a loaded one.

The README's first run: the embedded engine (Gemma 3 270M on llama.cpp) started by ctxprobe and the quick suite
sent to it, as a new user types it. The machine is loaded by `--busy N` processes that spin on the CPU beside
it (each a plain Python loop, like a build or another job), so the engine must share the cores. Printed per
case: the seconds to the table (the run's end), the samples scored and errored, the threads the engine was
started with (its log's ready line), and the load average at the end.

    python benchmarks/bench_quick_start.py [--busy 0,2] [--timeout 600] [--threads N]

Target: the table in at most 180 s on 2 cores loaded (load 4: two spinning processes beside the run).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import command  # the `ctxprobe` command as a user starts it

TARGET_S = 180.0
SCORED = re.compile(r"(\d+) samples scored, (\d+) errored")
THREADS = re.compile(r"ctxprobe-serve: ready on .*threads: ([^)]+)\)")


def spinners(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def one_case(busy: int, timeout_s: float, threads: int | None) -> dict[str, object]:
    load = spinners(busy)
    try:
        if busy:
            time.sleep(2.0)  # the spinners are running before ctxprobe looks at the cores
        with tempfile.TemporaryDirectory(prefix="ctxprobe-quick-") as tmp:
            argv = [*command(), "run", "--suite", "quick", "--results-dir", tmp]
            if threads:
                argv += ["--threads", str(threads)]
            env = {**os.environ, "TMPDIR": tmp}  # the engine's log (a temporary file) lands here, to be read
            start = time.monotonic()
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False, env=env)
                out, code = done.stdout + done.stderr, done.returncode
            except subprocess.TimeoutExpired as exc:
                out, code = str(exc.stdout or "") + str(exc.stderr or ""), None
            seconds = time.monotonic() - start
            logs = "".join(p.read_text(errors="replace") for p in Path(tmp).rglob("*.log"))
    finally:
        for proc in load:
            proc.kill()
            proc.wait()
    scored = SCORED.search(out)
    started = THREADS.search(logs)
    return {
        "busy": busy,
        "exit": code,
        "seconds": seconds,
        "scored": int(scored.group(1)) if scored else None,
        "errored": int(scored.group(2)) if scored else None,
        "threads": started.group(1) if started else "?",
        "load": os.getloadavg()[0],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", default="0,2", help="spinning processes beside the run, per case (comma list)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a case is stopped")
    parser.add_argument("--threads", type=int, default=None, help="pass --threads N (default: ctxprobe chooses)")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}; target: the table within {TARGET_S:.0f} s with 2 spinning processes")
    print(f"{'busy':>4}  {'exit':>4}  {'seconds':>7}  {'scored':>6}  {'errored':>7}  {'threads':>20}  {'load':>4}")
    for busy in (int(n) for n in args.busy.split(",")):
        row = one_case(busy, args.timeout, args.threads)
        print(
            f"{row['busy']:>4}  {row['exit']!s:>4}  {row['seconds']:>7.1f}  {row['scored']!s:>6}  "
            f"{row['errored']!s:>7}  {row['threads']!s:>20}  {row['load']:>4.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
