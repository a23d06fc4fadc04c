"""Two real embedded engines as replicas of one deployment, the first one (whose tokenizer the run counts
with) killed with SIGKILL mid-run: its samples in flight and its tokenize calls go to the other, every sample
is scored and the run ends with exit 0."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from ctxprobe_cli import only_run_dir, popen

from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine

SAMPLES = 10  # five depths, two seeds: the kill lands after KILL_AFTER, with as many answered after it
KILL_AFTER = 4
# One thread per replica: both engines compute at once, and llama.cpp's threads spin at a barrier after every
# operation, so two engines that each start (on an idle machine) with a thread per core stall one another on a
# 2-core CI runner; a thread each leaves each engine a core.
THREADS = 1


def _lines(results: Path) -> list[dict]:
    dirs = [p for p in results.iterdir() if p.is_dir()] if results.exists() else []
    path = dirs[0] / "samples.jsonl" if dirs else None
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_replica_killed_mid_run_costs_no_sample(tmp_path: Path) -> None:
    results = tmp_path / "results"
    with (
        EmbeddedEngine(n_ctx=4096, threads=THREADS, log_path=tmp_path / "a.log") as first,
        EmbeddedEngine(n_ctx=4096, threads=THREADS, log_path=tmp_path / "b.log") as second,
    ):
        started = time.monotonic()
        run = popen(
            "run",
            "--endpoint",
            first.base_url,
            "--endpoint",
            second.base_url,
            "--family",
            "niah",
            "--lengths",
            "512",  # the kill is the point, not the length
            "--depths",
            "0:100:25",
            "--samples",
            "2",
            "--mode",
            "completions",
            "--concurrency",
            "2",
            "--order",
            "as-listed",
            "--quiet",
            "--no-report",
            "--results-dir",
            str(results),
        )
        while len(_lines(results)) < KILL_AFTER and run.poll() is None and time.monotonic() - started < 1800:
            time.sleep(0.05)
        assert first.process is not None
        os.killpg(os.getpgid(first.process.pid), signal.SIGKILL)  # no goodbye: connections in flight cut
        killed_at = len(_lines(results))
        _, err = run.communicate(timeout=1800)  # a shared, loaded CPU: minutes
        took = time.monotonic() - started
    assert run.returncode == 0, err[-3000:]
    recs = _lines(results)
    manifest = json.loads((only_run_dir(results) / "manifest.json").read_text())
    print(
        f"killed after {killed_at} answers; {len(recs)} records, exit {run.returncode}, {took:.0f} s; "
        f"replica events {[(e['replica'], e['event']) for e in manifest['replica_events']]}"
    )
    assert KILL_AFTER <= killed_at < SAMPLES - 2  # mid-run: answers before the kill and after it
    assert len(recs) == SAMPLES and len({r["sample"]["sample_id"] for r in recs}) == SAMPLES
    assert all(r["error"] is None and r["score"] is not None for r in recs), [
        r["error_detail"] for r in recs if r["error"]
    ]
    assert manifest["status"] == "finished"
    dropped = [e for e in manifest["replica_events"] if e["event"] == "dropped"]
    assert dropped and dropped[0]["replica"] == first.base_url
    after = recs[killed_at + 2 :]  # past those that may have been answered while the kill landed
    assert after and {r["response"]["endpoint"] for r in after} == {second.base_url}
    assert "stopped serving" not in err
