"""A user's needle file end to end on the real embedded engine (llama.cpp serving Gemma 3 270M), with the same
engine as the optional judge: exact-length prompts as the server counts them, every sample scored by its
rule, one judge verdict (or judge error) beside each score, and the scores the same as the rules give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

from ctxprobe.evals.records.judge import read_verdicts
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.build import build_sample, token_counter

pytestmark = pytest.mark.engine
FACTS = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "needles" / "facts.jsonl"


def test_a_needle_file_on_the_engine_with_the_engine_as_judge(embedded_engine: EmbeddedEngine, tmp_path: Path) -> None:
    url = embedded_engine.base_url
    done = ctxprobe(
        "run",
        "--endpoint",
        url,
        "--needles",
        str(FACTS),
        "--lengths",
        "1k",
        "--depths",
        "50",
        "--mode",
        "completions",
        "--judge-endpoint",
        url,
        "--results-dir",
        str(tmp_path),
        "--quiet",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = only_run_dir(tmp_path)
    records = list(RunStore(run_dir).latest_records().values())
    assert len(records) == 5 and all(r.error is None for r in records)
    assert {r.sample.expected.kind for r in records} == {"exact", "number", "set", "contains"}
    counter = token_counter("local:gemma3-270m")
    for r in records:
        assert r.response is not None and r.score is not None
        assert r.response.prompt_tokens == r.sample.planned_tokens  # the server counts what was planned
        assert build_sample(r.sample.recipe, counter).prompt_sha256 == r.sample.prompt_sha256
        assert score_sample(r.sample, r.response.text) == r.score  # the rule's score, untouched by the judge
    verdicts = read_verdicts(run_dir)
    assert set(verdicts) == {r.sample.sample_id for r in records}
    assert all((v.verdict is None) is (v.error is not None) for v in verdicts.values())
    assert all(
        v.exact == next(r.score.correct for r in records if r.sample.sample_id == v.sample_id)  # type: ignore[union-attr]
        for v in verdicts.values()
    )
    assert "judge (" in done.stdout and "beside the exact score" in done.stdout
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["options"]["judge_endpoint"] == url
