"""A capacity curve end to end on the real embedded engine (llama.cpp serving Gemma 3 270M): the facts
axis from the command line, every fact-holding prompt served at its planned length and scored, and the
capacity table, PNG and report section written. Small on purpose; the figures come from a longer run
(docs/tasks.md: Recall capacity). Sent to the session's one engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine


def test_a_capacity_curve_runs_scores_and_reports(embedded_engine: EmbeddedEngine, tmp_path: Path) -> None:
    done = ctxprobe(
        "run",
        "--endpoint",
        embedded_engine.base_url,
        "--mode",
        "completions",
        "--family",
        "capacity",
        "--facts",
        "1,8",
        "--lengths",
        "1k",
        "--depths",
        "50",
        "--samples",
        "1",
        "--results-dir",
        str(tmp_path),
        "--quiet",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = only_run_dir(tmp_path)
    recs = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert sorted(r["sample"]["recipe"]["params"]["facts"] for r in recs) == [1, 8]
    assert all(r["error"] is None and r["score"] is not None for r in recs)
    assert all(r["response"]["prompt_tokens"] == r["sample"]["planned_tokens"] for r in recs)
    assert sorted(len(r["sample"]["needles"]) for r in recs) == [1, 8]
    assert "capacity  capacity  -  [prose]" in done.stdout
    summary = (run_dir / "summary.md").read_text()
    assert "# Recall capacity" in summary and "| capacity |" in summary
    assert (run_dir / "capacity.png").stat().st_size > 10_000
    assert "Recall capacity" in (run_dir / "report.html").read_text(encoding="utf-8")
