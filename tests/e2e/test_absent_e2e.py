"""Absent needles on the real embedded engine (llama-server, Gemma 3 270M, completions): a nested run of niah
single with its absent twin writes well-formed records, each absent question's keys stand nowhere in its
rebuilt prompt (byte for byte the one sent), and the absent questions ride the present chains' cache. One
length (1K) with two depths: the chain's context is shared by its depths as by its lengths."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import ctxprobe
from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.build import builder_for, token_counter

pytestmark = pytest.mark.engine

SUITE = {
    "name": "absent-e2e",
    "lengths": "1k",
    "depths": "0,100",
    "samples": 1,
    "layout": "nested",
    "tasks": [
        {"family": "niah", "params": {"variant": "single"}},
        {"family": "niah", "params": {"variant": "single", "absent": True}},
    ],
}


def test_absent_needles_on_gemma(embedded_engine: EmbeddedEngine, tmp_path: Path) -> None:
    suite = tmp_path / "absent.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    done = ctxprobe.run(
        endpoints=[embedded_engine.base_url],
        mode="completions",
        suite=str(suite),
        logprobs=False,
        cache_check="off",
        results_dir=str(tmp_path / "runs"),
        no_report=True,
        quiet=True,
    )
    assert done.exit_code == 0, done.message
    records = load_run(done.run_dir).records
    absent = [r for r in records if r.sample.expected.kind == "absent"]
    assert len(absent) == len(records) // 2 == 2
    builder = builder_for(token_counter("local:gemma3-270m"))
    for record in absent:
        assert record.error is None and record.score is not None and record.response is not None
        score = record.score
        assert score.unit == "first sentence" and isinstance(score.correct, bool)
        assert score.attribution in (("hallucinated",) if score.extracted and not score.correct else (None,))
        assert {n.role for n in record.sample.needles} == {"distractor"} and record.sample.expected.answers == []
        sample = builder.build(record.sample.recipe)
        assert sample.prompt_sha256 == record.sample.prompt_sha256  # the prompt sent, rebuilt
        context = sample.prompt[: sample.prompt.rindex(sample.question)]
        keys = [w for w in sample.question.split() if w.count("-") == 1]
        assert keys and not any(k in context for k in keys)
        # the chain's context was computed for its present questions: the absent one reuses it
        assert (record.response.cached_tokens or 0) >= record.response.prompt_tokens // 2
    print(
        "absent on Gemma:",
        [
            (r.sample.recipe.context_tokens, r.response.text[:40], r.score.correct)
            for r in absent
            if r.response and r.score
        ],
    )
