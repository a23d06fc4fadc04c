"""The embedded engine (llama-server from the xllamacpp wheel, in a child process): how fast it starts,
how fast it prefills, and how fast Ctrl-C clears everything away.

- startup: `EmbeddedEngine.start()` until `GET /health` answers 200 (spawn, model load, warm-up), median
  of `--rounds` fresh starts;
- prefill: tokens per second of one prompt of `--prefill-tokens` tokens (default 4096, a fresh prompt each
  round so no cached prefix helps), from the server's own `timings.prompt_per_second`, and the wall time
  of the whole request for comparison;
- Ctrl-C during a prefill: `ctxprobe run` on one niah sample of `--ctrl-c-tokens` tokens (default 8K) as
  a user runs it; once the engine's slot is busy with the prompt, SIGINT goes to ctxprobe (as Ctrl-C does
  in a terminal: the engine runs in a session of its own and gets nothing), then the time until ctxprobe
  has exited and the engine's process is gone.

    python benchmarks/bench_engine.py [--rounds 3] [--threads N] [--prefill-tokens 4096] [--ctrl-c-tokens 8192]

Targets (PASS/FAIL): Ctrl-C <= 2 s; startup <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxprobe.runners.http_json import Unreachable, request_json
from ctxprobe.runners.launcher import EmbeddedEngine, engine_version
from ctxprobe.tasks.token_counter import make_token_counter

TARGETS = {"ctrl_c_s": 2.0, "startup_s": 5.0}


def startup_s(args: argparse.Namespace, log: Path) -> float:
    engine = EmbeddedEngine(n_ctx=1024, threads=args.threads, log_path=log)
    started = time.perf_counter()
    engine.start()
    elapsed = time.perf_counter() - started
    engine.stop()
    return elapsed


def prefill_prompt(tokens: int, salt: int) -> str:
    """About `tokens` tokens of varied text, different for each salt (no shared prefix to reuse)."""
    counter = make_token_counter("local:gemma3-270m")
    words = [f"w{salt}x{i % 997} item{(i * 7919 + salt) % 10007}" for i in range(tokens)]
    text = " ".join(words)
    n = counter.count_many([text])[0]
    return text[: int(len(text) * (tokens - 1) / n)]


def prefill(args: argparse.Namespace, log: Path) -> list[tuple[int, float, float]]:
    """(prompt tokens, server prompt tok/s, wall s) per round."""
    out = []
    with EmbeddedEngine(n_ctx=args.prefill_tokens + 256, threads=args.threads, log_path=log) as engine:
        for salt in range(args.rounds):
            prompt = prefill_prompt(args.prefill_tokens, salt)
            started = time.perf_counter()
            status, body = request_json(
                "POST",
                f"{engine.base_url}/v1/completions",
                {"prompt": prompt, "max_tokens": 1, "temperature": 0},
                timeout_s=600,
            )
            wall = time.perf_counter() - started
            if status != 200:
                raise SystemExit(f"prefill request failed: HTTP {status}: {str(body)[:300]}")
            out.append((body["usage"]["prompt_tokens"], body["timings"]["prompt_per_second"], wall))
    return out


def child_pids(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def engine_port(pid: int) -> int | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return int(argv[argv.index(b"--port") + 1]) if b"ctxprobe.runners.serve" in argv and b"--port" in argv else None


def slot_busy(port: int) -> bool:
    try:
        status, slots = request_json("GET", f"http://127.0.0.1:{port}/slots", timeout_s=1.0)
    except Unreachable:
        return False
    return status == 200 and isinstance(slots, list) and any(s.get("is_processing") for s in slots)


def ctrl_c(args: argparse.Namespace, results: Path) -> tuple[float, float, int, str]:
    """(seconds from SIGINT until nothing is left, seconds the prefill had run, ctxprobe's exit code, status)."""
    cmd = [
        sys.executable,
        "-m",
        "ctxprobe.evals.cli.main",
        "run",
        "--family",
        "niah",
        "--lengths",
        str(args.ctrl_c_tokens),
        "--depths",
        "50",
        "--samples",
        "1",
        "--quiet",
        "--results-dir",
        str(results),
    ]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    # SIGINT at its default action, as in a terminal (a shell's background job inherits it ignored)
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300
    engine_pid = port = None
    while time.monotonic() < deadline and proc.poll() is None:
        for pid in child_pids(proc.pid):
            if engine_port(pid):
                engine_pid, port = pid, engine_port(pid)
        if port and slot_busy(port):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        raise SystemExit(f"the run never reached a prefill: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
    busy_at = time.monotonic()
    time.sleep(args.ctrl_c_after)  # well into the prefill
    assert engine_pid is not None
    sent = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    while proc.poll() is None or os.path.exists(f"/proc/{engine_pid}"):
        time.sleep(0.005)
        if time.monotonic() - sent > 60:
            raise SystemExit("ctxprobe or its engine still running 60 s after Ctrl-C")
    gone = time.monotonic() - sent
    manifest = next(results.glob("*/manifest.json"))
    return gone, sent - busy_at, proc.returncode, json.loads(manifest.read_text())["status"]


def check(ok: bool, what: str, detail: str) -> bool:
    print(f"  {'PASS' if ok else 'FAIL'}  {what}: {detail}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="engine threads (default: the engine's choice)")
    parser.add_argument("--prefill-tokens", type=int, default=4096)
    parser.add_argument("--ctrl-c-tokens", type=int, default=8192)
    parser.add_argument("--ctrl-c-after", type=float, default=2.0, help="seconds into the prefill to send Ctrl-C")
    args = parser.parse_args()
    if args.rounds < 1 or args.prefill_tokens < 64 or args.ctrl_c_tokens < 1024:
        parser.error("--rounds >= 1, --prefill-tokens >= 64, --ctrl-c-tokens >= 1024")
    print(
        f"embedded engine: xllamacpp {engine_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}, threads {args.threads or 'engine default'}; medians of {args.rounds} rounds"
    )
    with tempfile.TemporaryDirectory(prefix="ctxprobe-bench-engine-") as root:
        starts = [startup_s(args, Path(root) / f"start{i}.log") for i in range(args.rounds)]
        print(
            f"startup to a healthy server   {statistics.median(starts):6.2f} s  "
            f"(runs: {', '.join(f'{s:.2f}' for s in starts)})"
        )
        rounds = prefill(args, Path(root) / "prefill.log")
        rate = statistics.median(r[1] for r in rounds)
        print(
            f"prefill, {rounds[0][0]:,}-token prompt  {rate:6.0f} tok/s (server timings; runs: "
            f"{', '.join(f'{r[1]:.0f}' for r in rounds)}); request wall "
            f"{statistics.median(r[2] for r in rounds):.2f} s"
        )
        stops = [ctrl_c(args, Path(root) / f"ctrl-c-{i}") for i in range(args.rounds)]
        gone = statistics.median(s[0] for s in stops)
        print(
            f"Ctrl-C during a {args.ctrl_c_tokens:,}-token prefill, until no process is left  {gone:6.2f} s  "
            f"(runs: {', '.join(f'{s[0]:.2f}' for s in stops)}; sent {args.ctrl_c_after:g} s into the prefill; "
            f"exit codes {sorted({s[2] for s in stops})}; manifest {sorted({s[3] for s in stops})})"
        )
    print("targets:")
    ok = [
        check(gone <= TARGETS["ctrl_c_s"], "Ctrl-C during a prefill <= 2 s", f"{gone:.2f} s"),
        check(
            statistics.median(starts) <= TARGETS["startup_s"], "startup <= 5 s", f"{statistics.median(starts):.2f} s"
        ),
    ]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
