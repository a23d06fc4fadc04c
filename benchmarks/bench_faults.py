"""How `ctxprobe run` ends when the endpoint misbehaves around the completions, one line per fault.

Each fault is injected into the tests' fake vLLM (tests/runners/fake_engine.py, on 127.0.0.1); the CLI
runs in a child process, as a nightly job runs it, with a cold token-count cache. Printed per fault: the
exit code, the manifest's status, the seconds it took, and what the fault is about (samples kept, the
flag or count that should say it, whether a credential reached stderr).

    python benchmarks/bench_faults.py [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "runners"))

from fake_engine import FakeEngine, Reply, wait_until  # noqa: E402

SUITE = ["--family", "niah", "--lengths", "2k", "--depths", "0:100:10", "--samples", "10", "--quiet", "--no-report"]


def _start(url: str, tmp: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxprobe.evals.cli.main",
            "run",
            "--endpoint",
            url,
            *SUITE,
            "--results-dir",
            str(tmp / "results"),
            *extra,
        ],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "CTXPROBE_CACHE": str(tmp / "cache")},
    )


def _ended(child: subprocess.Popen[str], tmp: Path, started: float) -> dict[str, Any]:
    out, err = child.communicate(timeout=900)
    took = time.monotonic() - started
    folders = [p for p in (tmp / "results").glob("*") if p.is_dir()]
    manifest: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    if folders:
        mpath, spath = folders[0] / "manifest.json", folders[0] / "samples.jsonl"
        manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
        records = [json.loads(x) for x in spath.read_text().splitlines()] if spath.exists() else []
    return {
        "code": child.returncode,
        "status": manifest.get("status", "-"),
        "s": took,
        "records": records,
        "manifest": manifest,
        "err": err,
        "out": out,
    }


def _simple(engine: FakeEngine, tmp: Path, *extra: str) -> dict[str, Any]:
    started = time.monotonic()
    return _ended(_start(engine.url, tmp, *extra), tmp, started)


def tokenize_5xx(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 16, tokenize_fail_every=100) as engine:  # 1 % of tokenize calls
        r = _simple(engine, tmp)
    return r, f"{len(r['records'])}/110 samples kept"


def tokenize_gone(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 16) as engine:
        engine.tokenize_fail_after = 10**9
        engine.answer = lambda body: setattr(engine, "tokenize_fail_after", 0) or "42"  # 503 from then on
        r = _simple(engine, tmp, "--concurrency", "1")
    return r, f"{len(r['records'])}/110 samples kept"


def key_revoked(tmp: Path) -> tuple[dict[str, Any], str]:
    os.environ["BENCH_KEY"] = "k-1"
    with FakeEngine("vllm", context_length=1 << 16, api_key="k-1") as engine:
        served: list[int] = []

        def answer(body: dict[str, Any]) -> str:
            served.append(1)
            if len(served) == 20:
                engine.api_key = "k-2"
            return "42"

        engine.answer = answer
        r = _simple(engine, tmp, "--api-key-env", "BENCH_KEY", "--concurrency", "1")
    errored = sum(1 for x in r["records"] if x["error"])
    return r, f"{len(r['records'])}/110 samples kept, {errored} of them errored"


def frozen(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 16) as engine:
        served: list[float] = []

        def answer(body: dict[str, Any]) -> str:
            served.append(time.monotonic())
            if len(served) == 10:
                engine.freeze()
            return "42"

        engine.answer = answer
        r = _simple(engine, tmp, "--timeout", "2", "--timeout-per-1k", "0", "--concurrency", "4")
        stopped = time.monotonic()
        engine.thaw()
    ending = [line for line in r["err"].splitlines() if "not sent" in line]
    said = ending[-1].split("; ", 1)[-1].split(". When")[0] if ending else "-"
    return r, f"--timeout 2: exit {stopped - served[9]:.1f} s after the freeze; {said}"


def sigterm_build(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 20, tokenize_delay_s=0.02) as engine:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ctxprobe.evals.cli.main",
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "256k",
                "--depths",
                "50",
                "--samples",
                "2",
                "--quiet",
                "--results-dir",
                str(tmp / "results"),
            ],
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "CTXPROBE_CACHE": str(tmp / "cache")},
        )
        wait_until(lambda: engine.tokenize_calls > 200, timeout_s=120)
        started = time.monotonic()
        child.send_signal(signal.SIGTERM)
        r = _ended(child, tmp, started)
    return r, f"seconds from SIGTERM to exit: {r['s']:.1f}"


def usage_3x(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 16, usage_scale=3.0) as engine:
        r = _simple(engine, tmp)
    flagged = sum(1 for x in r["records"] if x.get("prompt_tokens_off") is not None)
    return r, (
        f"flagged {flagged}/{len(r['records'])}, manifest count {r['manifest'].get('samples_count_off', '-')}, "
        f"table line {'yes' if 'off the plan' in r['out'] else 'no'}"
    )


def retried(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 16) as engine:
        engine.script.extend([Reply(status=500), Reply(status=503), Reply(status=500)])
        r = _simple(engine, tmp, "--concurrency", "1", "--order", "as-listed")
    return r, f"max attempts on a record {max(x['attempts'] for x in r['records'])} (4 HTTP requests for one sample)"


def key_in_url(tmp: Path) -> tuple[dict[str, Any], str]:
    with FakeEngine("vllm", context_length=1 << 16) as engine:
        engine.close()  # nothing listens: the message names the endpoint
        started = time.monotonic()
        url = engine.url.replace("http://", "http://user:SECRET-KEY@")
        r = _ended(_start(url, tmp, "--retries", "0"), tmp, started)
    return r, f"key on stderr: {'yes' if 'SECRET-KEY' in r['err'] else 'no'}"


FAULTS: dict[str, Callable[[Path], tuple[dict[str, Any], str]]] = {
    "tokenize 503 on 1 % of calls": tokenize_5xx,
    "tokenize 503 from mid-run on": tokenize_gone,
    "key revoked after 20 answers": key_revoked,
    "server frozen after 10 answers": frozen,
    "SIGTERM during a 256k build": sigterm_build,
    "usage.prompt_tokens 3x planned": usage_3x,
    "3 x 5xx, then the answer": retried,
    "key in the URL, server down": key_in_url,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(FAULTS), help="one fault")
    args = ap.parse_args()
    for name, fault in FAULTS.items():
        if args.only and name != args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            r, what = fault(Path(tmp))
            print(f"{name:<32} exit {r['code']:<4} status {r['status']:<14} {r['s']:6.1f} s  {what}", flush=True)


if __name__ == "__main__":
    main()
