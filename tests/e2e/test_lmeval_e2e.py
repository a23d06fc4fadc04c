"""ctxprobe's prompts under the real `lm_eval` CLI against the embedded engine, and back: lm-eval's scores
are ctxprobe's scores of the same outputs, its prompt hashes are the samples' sha256, and the imported
log tables exactly as `ctxprobe run` tables the same samples on the same engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

from ctxprobe.evals.lmeval.task_utils import doc_sample
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.report.table import render_text
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine
pytest.importorskip("lm_eval")

SUITE = """\
name: lmeval-e2e
lengths: [1k]
depths: [0, 50, 100]
tasks:
  - family: niah
    params: {variant: single}
  - family: recall
    params: {kind: hex, length: 32}
    depths: [50]
"""


def test_lm_eval_runs_an_export_and_imports_back(embedded_engine: EmbeddedEngine, tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    tasks, out = tmp_path / "tasks", tmp_path / "lm-eval-out"
    exported = ctxprobe("export", str(suite), str(tasks), "--base-url", embedded_engine.base_url)
    assert exported.returncode == 0, exported.stderr[-2000:]
    command = next(line.strip() for line in exported.stdout.splitlines() if "local-completions" in line)
    command = command.replace("model=MODEL", f"model={embedded_engine.model_alias}").replace("lm-eval-out", str(out))
    assert command.startswith("lm_eval run ")
    ran = subprocess.run(
        [sys.executable, "-m", "lm_eval", *command.split()[1:]],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    print(ran.stdout)  # lm-eval's results table, for the record

    rows = [json.loads(line) for log in sorted(out.rglob("samples_*.jsonl")) for line in log.read_text().splitlines()]
    assert len(rows) == 4
    for row in rows:
        sample = doc_sample(row["doc"])
        assert row["prompt_hash"] == sample.prompt_sha256
        score = score_sample(sample, row["resps"][0][0])
        assert (row["exact"], row["partial"]) == (float(score.correct), pytest.approx(score.partial))

    imported = ctxprobe("import-lm-eval", str(out), "--results-dir", str(tmp_path / "imported"))
    assert imported.returncode == 0, imported.stderr[-2000:]
    print(imported.stdout)
    from_lm_eval = load_run(only_run_dir(tmp_path / "imported"))
    assert len(from_lm_eval.records) == 4
    assert from_lm_eval.frame()["correct"].mean() == pytest.approx(sum(r["exact"] for r in rows) / 4)

    direct = ctxprobe(
        "run",
        "--suite",
        str(suite),
        "--endpoint",
        embedded_engine.base_url,
        "--mode",
        "completions",
        "--token-counter",
        "local:gemma3-270m",
        "--concurrency",
        "1",
        "--quiet",
        "--results-dir",
        str(tmp_path / "direct"),
    )
    assert direct.returncode == 0, direct.stderr[-2000:]
    by_ctxprobe = load_run(only_run_dir(tmp_path / "direct"))
    assert {r.sample.sample_id for r in by_ctxprobe.records} == {r.sample.sample_id for r in from_lm_eval.records}
    assert render_text(from_lm_eval.records) == render_text(by_ctxprobe.records)
