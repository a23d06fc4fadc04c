"""`ctxprobe run` end to end on the embedded engine (the session's one) with Chinese niah on the `prose:zh` haystack at both question
positions: every sample scored at the length the server counted, the start layout asks before the document,
and the run's template sensitivity pairs `ctxprobe:start` with `ctxprobe`. One depth (50) is enough: the
positions are the axis here, and each is a sample of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine


def test_chinese_niah_at_both_question_positions(embedded_engine: EmbeddedEngine, tmp_path: Path) -> None:
    done = ctxprobe(
        "run",
        "--endpoint",
        embedded_engine.base_url,
        "--family",
        "niah",
        "--params",
        "lang=zh",
        "--haystack",
        "prose:zh",
        "--lengths",
        "1k",
        "--depths",
        "50",
        "--question-positions",
        "end,start",
        "--mode",
        "completions",
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = only_run_dir(tmp_path)
    recs = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and all(r["error"] is None for r in recs)
    assert all(r["response"]["prompt_tokens"] == r["sample"]["planned_tokens"] for r in recs)
    positions = sorted(r["sample"]["recipe"]["params"].get("question_position", "end") for r in recs)
    assert positions == ["end", "start"]
    assert all(r["sample"]["recipe"]["params"]["lang"] == "zh" for r in recs)
    sensitivity = (run_dir / "template_sensitivity.md").read_text(encoding="utf-8")
    assert "ctxprobe vs ctxprobe:start" in sensitivity and "ctxprobe vs ctxprobe:start" in done.stdout
