"""Seconds from `ctxprobe run` starting to the first request a local server receives, and to the first completion.

A local server that answers at once (the tests' fake llama-server, tests/runners/fake_engine.py, on
127.0.0.1) stands for the endpoint, so every second measured is ctxprobe's: `ctxprobe run --endpoint URL
--suite SUITE` is started as a user starts it (the `ctxprobe` script beside this python, else `python -c` the
same entry point), and the clock runs from just before the process is spawned to the arrival of

- its first request (the endpoint's probe), and
- its first completion request (its first prompt built and sent: counted with the server's tokenizer,
  the default for a remote endpoint).

The process is then stopped. Also printed: the CPU seconds the process had used at its first request (read
from /proc, a figure the machine's load barely moves) and the load average, since a loaded machine delays
a process that is ready to run. Medians over `--rounds`; a fresh cache folder each round.

    python benchmarks/bench_first_request.py [--suite nightly] [--rounds 5]

Target: the first request at most 1.5 s after start on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "runners"))

from fake_engine import FakeEngine  # noqa: E402

TARGET_S = 1.5


def command() -> list[str]:
    script = Path(sys.executable).with_name("ctxprobe")
    if script.exists() and shutil.which(str(script)):
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "import sys; from ctxprobe.evals.cli.main import main; sys.exit(main())"]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process (Linux /proc), None where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_round(suite: str, timeout_s: float) -> dict[str, float | None]:
    with (
        FakeEngine("llama-server", context_length=1 << 21) as engine,
        tempfile.TemporaryDirectory(prefix="ctxprobe-first-") as tmp,
    ):
        env = {**os.environ, "CTXPROBE_CACHE": str(Path(tmp) / "cache")}
        argv = [
            *command(),
            "run",
            "--endpoint",
            engine.url,
            "--suite",
            suite,
            "--results-dir",
            str(Path(tmp) / "results"),
            "--quiet",
        ]
        started = time.monotonic()
        child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        first = first_cpu = completion = None
        try:
            while time.monotonic() - started < timeout_s:
                if first is None and engine.requests:
                    first, first_cpu = engine.requests[0].at - started, cpu_seconds(child.pid)
                if engine.completion_calls():
                    completion = engine.completion_calls()[0].at - started
                    break
                if child.poll() is not None:
                    raise SystemExit(
                        f"ctxprobe ended (exit {child.returncode}) before a completion:\n"
                        f"{child.stderr.read().decode()[-2000:] if child.stderr else ''}"
                    )
                time.sleep(0.002)
        finally:
            child.kill()
            child.wait()
    return {"first_s": first, "first_cpu_s": first_cpu, "completion_s": completion}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="nightly", help="the suite run (default nightly)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes measured (default 5)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a round may take")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    print(
        f"ctxprobe run --suite {args.suite} against a local instant llama-server; {args.rounds} rounds; "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {' '.join(command()[:2])}"
    )
    rounds = [one_round(args.suite, args.timeout) for _ in range(args.rounds)]
    for key, what in (
        ("first_s", "first request (the probe)"),
        ("first_cpu_s", "  its CPU seconds by then"),
        ("completion_s", "first completion"),
    ):
        values = [r[key] for r in rounds if r[key] is not None]
        if values:
            print(
                f"{what:<28} median {statistics.median(values):5.2f} s   runs: {', '.join(f'{v:.2f}' for v in values)}"
            )
    first = statistics.median(r["first_s"] for r in rounds if r["first_s"] is not None)
    verdict = "PASS" if first <= TARGET_S else "FAIL"
    print(
        f"{verdict}  first request {first:.2f} s after start (target at most {TARGET_S} s on an idle machine; "
        f"load average now {os.getloadavg()[0]:.2f})"
    )
    return 0 if first <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
