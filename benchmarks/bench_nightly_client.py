"""ctxprobe's own cost on the whole nightly suite: every second and byte measured here is the client's.

The tests' fake vLLM (tests/runners/fake_engine.py, on 127.0.0.1, in this process) answers every request at
once; `ctxprobe run --suite nightly` (nested, 3,696 samples, 1,241,737,728 prompt tokens) runs against it in a
subprocess with `--token-counter estimate` (no tokenize calls: the server's counts are measured elsewhere).
Four commands are timed, each in a process of its own:

1. the run (sending, then its cache-path check, summary files, heatmaps and report.html): seconds and CPU a sample while
   sending, peak RSS while sending (until the last record is written) and while reporting (after it);
2. `ctxprobe show RUN` (the table, summary files and heatmaps rewritten);
3. `ctxprobe report RUN` (report.html);
4. `ctxprobe run --resume COPY` of a copy of the run cut to its first half of records: its seconds against
   the whole run's, and the samples it sent (exactly the half left).

    python benchmarks/bench_nightly_client.py                       # the whole nightly (~10 min on 2 cores)
    python benchmarks/bench_nightly_client.py --lengths 32k,64k --samples 2    # a subset, for iterating

Targets (each figure is printed against its own): `show` (the table, summary files and heatmaps), `report` and
the run's closing step (the cache-path check, summary files, heatmaps and report.html) of the whole nightly within
15 s and 500 MB each; a resume's sending in proportion to the samples left (its CPU seconds a sample within a tenth
of the whole run's: its wall seconds move with the load), its closing step the same fixed cost as the run's (it writes the whole run's summary and report).
Timings move with the machine's load: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "runners"))
from fake_engine import FakeEngine  # noqa: E402

TICK_S = 0.05
TARGET_S, TARGET_MB = 15.0, 500.0  # show, report and the run's closing step, each
PROPORTION = 0.1  # a resume's CPU seconds a sample sent, at most this far from the whole run's
CLOCK = os.sysconf("SC_CLK_TCK")


class _Forgotten(list):  # type: ignore[type-arg]
    """The fake's request log, kept empty: 3,696 bodies of up to 4 MB are not worth holding here."""

    def append(self, item: Any) -> None:
        pass


@dataclass
class Watched:
    """One ctxprobe process: its wall seconds, CPU seconds and peak RSS, in all and before `split` held."""

    code: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_mb: float = 0.0
    split_wall_s: float | None = None  # when `split` first held
    split_cpu_s: float | None = None
    split_peak_mb: float = 0.0  # peak RSS until then
    after_peak_mb: float = 0.0  # peak RSS after
    stderr: str = ""


def _rss_cpu(pid: int) -> tuple[float, float] | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    rss_kb = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), None)
    if rss_kb is None:  # exiting
        return None
    return rss_kb / 1024, (int(fields[11]) + int(fields[12])) / CLOCK  # utime, stime


def watch(args: list[str], split: Any = None) -> Watched:
    """Run `ctxprobe ARGS`, sampling its RSS and CPU every TICK_S; `split()` marks the end of the first phase."""
    out = Watched()
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "ctxprobe.evals.cli.main", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(child.stderr.read() if child.stderr else ""), daemon=True)
    reader.start()
    while True:
        done, status, usage = os.wait4(child.pid, os.WNOHANG)
        if done:
            break
        seen = _rss_cpu(child.pid)
        if seen is not None:
            rss, cpu = seen
            if out.split_wall_s is None:
                out.split_peak_mb = max(out.split_peak_mb, rss)
                if split is not None and split():
                    out.split_wall_s, out.split_cpu_s = time.monotonic() - start, cpu
            else:
                out.after_peak_mb = max(out.after_peak_mb, rss)
        time.sleep(TICK_S)
    child.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    out.code = child.returncode
    out.wall_s = time.monotonic() - start
    out.stderr = "".join(err)
    out.cpu_s = usage.ru_utime + usage.ru_stime
    out.peak_mb = usage.ru_maxrss / 1024  # the whole process's peak, exact (the phases' are sampled)
    if out.split_wall_s is None:
        out.split_peak_mb = out.peak_mb
    else:
        out.after_peak_mb = max(out.after_peak_mb, out.peak_mb if out.peak_mb > out.split_peak_mb else 0)
    return out


def against(seconds: float, mb: float) -> str:
    """`(target 15 s, 500 MB: met)`, or what missed it."""
    missed = [f"{what} over" for what, over in (("time", seconds > TARGET_S), ("memory", mb > TARGET_MB)) if over]
    return f"(target {TARGET_S:g} s, {TARGET_MB:g} MB: {', '.join(missed) or 'met'})"


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def lines_in(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


class LineCounter:
    """Lines of a growing file, read incrementally (the whole file is never read twice)."""

    def __init__(self, path_of: Any) -> None:
        self.path_of, self.count, self.offset = path_of, 0, 0

    def __call__(self) -> int:
        path = self.path_of()
        if path is None or not path.exists():
            return 0
        with path.open("rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        self.offset += len(chunk)
        self.count += chunk.count(b"\n")
        return self.count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", help="a subset of the nightly's lengths (default: all six)")
    ap.add_argument("--samples", type=int, help="seeds per cell (default: the suite's 8)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--keep", help="keep the run folders under this folder")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-nightly-"))
    work.mkdir(parents=True, exist_ok=True)
    subset = [
        *(["--lengths", args.lengths] if args.lengths else []),
        *(["--samples", str(args.samples)] if args.samples else []),
    ]
    with FakeEngine("vllm", context_length=1 << 21) as engine:
        engine.requests = _Forgotten()
        results = work / "results"

        def run_dir() -> Path | None:
            dirs = [p for p in results.iterdir() if p.is_dir()] if results.exists() else []
            return dirs[0] if dirs else None

        planned = [0]

        def total() -> int:
            if not planned[0] and (d := run_dir()) is not None and (d / "manifest.json").exists():
                with contextlib.suppress(json.JSONDecodeError):
                    planned[0] = json.loads((d / "manifest.json").read_text()).get("samples_planned") or 0
            return planned[0]

        counter = LineCounter(lambda: (d / "samples.jsonl") if (d := run_dir()) else None)
        run = watch(
            [
                "run",
                "--endpoint",
                engine.url,
                "--suite",
                "nightly",
                *subset,
                "--token-counter",
                "estimate",
                "--concurrency",
                str(args.concurrency),
                "--allow-errors",
                "--quiet",
                "--results-dir",
                str(results),
            ],
            split=lambda: total() > 0 and counter() >= total(),
        )
        folder = run_dir()
        assert folder is not None and run.code == 0, run.stderr[-2000:]
        n = lines_in(folder / "samples.jsonl")
        send_s = run.split_wall_s or run.wall_s
        send_cpu = run.split_cpu_s or run.cpu_s
        close_s = run.wall_s - send_s
        print(f"nightly{' subset' if subset else ''}: {n} samples, {work}")
        print(
            f"run: {run.wall_s:.1f} s in all; sending {send_s:.1f} s ({send_s / n:.4f} s a sample, "
            f"{send_cpu / n:.4f} s of CPU a sample), peak RSS {run.split_peak_mb:.0f} MB while sending; "
            f"closing step (cache-path check, summary, heatmaps, report.html) {close_s:.1f} s "
            f"({run.cpu_s - send_cpu:.1f} s CPU), peak RSS {run.after_peak_mb:.0f} MB "
            f"{against(close_s, run.after_peak_mb)}; {load()}"
        )

        show = watch(["show", str(folder)])
        assert show.code == 0, show.stderr[-2000:]
        print(
            f"show: {show.wall_s:.1f} s ({show.cpu_s:.1f} s CPU), peak RSS {show.peak_mb:.0f} MB "
            f"{against(show.wall_s, show.peak_mb)}; {load()}"
        )
        report = watch(["report", str(folder), "-o", str(work / "report.html")])
        assert report.code == 0, report.stderr[-2000:]
        print(
            f"report: {report.wall_s:.1f} s ({report.cpu_s:.1f} s CPU), peak RSS {report.peak_mb:.0f} MB "
            f"{against(report.wall_s, report.peak_mb)}; {load()}"
        )

        half = work / "half"
        shutil.rmtree(half, ignore_errors=True)
        shutil.copytree(folder, half)
        kept = n // 2
        with (folder / "samples.jsonl").open("rb") as src, (half / "samples.jsonl").open("wb") as dst:
            for i, line in enumerate(src):
                if i >= kept:
                    break
                dst.write(line)
        manifest = json.loads((half / "manifest.json").read_text())
        manifest["status"] = "interrupted"
        (half / "manifest.json").write_text(json.dumps(manifest))
        resumed_lines = LineCounter(lambda: half / "samples.jsonl")
        resumed = watch(["run", "--resume", str(half), "--quiet"], split=lambda: resumed_lines() >= n)
        sent = lines_in(half / "samples.jsonl") - kept
        resume_send_s = resumed.split_wall_s or resumed.wall_s
        resume_send_cpu = resumed.split_cpu_s or resumed.cpu_s
        cpu_each, whole_cpu_each = resume_send_cpu / max(sent, 1), send_cpu / n
        proportional = abs(cpu_each / whole_cpu_each - 1) <= PROPORTION
        print(
            f"resume of a half-done run ({kept} kept, {n - kept} left): {resumed.wall_s:.1f} s "
            f"({resumed.wall_s / run.wall_s:.2f} of the whole run's {run.wall_s:.1f} s; "
            f"{resumed.cpu_s:.1f} s CPU), {sent} samples sent, exit {resumed.code}, "
            f"peak RSS {resumed.peak_mb:.0f} MB; {load()}"
        )
        print(
            f"  its sending: {resume_send_s:.1f} s ({resume_send_s / max(sent, 1):.4f} s a sample, the whole run's "
            f"{send_s / n:.4f}), {cpu_each:.4f} s of CPU a sample against the whole run's {whole_cpu_each:.4f} "
            f"(target: within {PROPORTION:.0%}, CPU being what the load leaves alone: "
            f"{'met' if proportional else 'missed'}); its closing step {resumed.wall_s - resume_send_s:.1f} s "
            f"({resumed.cpu_s - resume_send_cpu:.1f} s CPU; the run's: {close_s:.1f} s)"
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
