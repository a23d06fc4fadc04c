"""The scoring rule's version on every score: records written before versions read as the first rule, and
nights scored by different rules are not compared as builds (history says the rule changed, no drop)."""

from __future__ import annotations

import json
from pathlib import Path

import ctxprobe
from ctxprobe.evals.records.record import SCORER_VERSION, SampleRecord
from ctxprobe.evals.scoring.score import score_sample
from tests.evals.compare.synthetic import all_right, grid, write_run
from tests.evals.factories import make_sample

FIXTURE = Path(__file__).parent / "fixtures" / "v2_outputs" / "samples.jsonl"


def test_records_written_before_versions_were_scored_by_the_first_rule():
    records = [SampleRecord.model_validate_json(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    scored = [r for r in records if r.score is not None]
    assert scored and {r.score.scorer_version for r in scored} == {1}


def test_a_new_score_carries_the_current_rule_through_a_round_trip():
    score = score_sample(make_sample(["1234567"], "value"), " 1234567.")
    assert score.scorer_version == SCORER_VERSION == 4
    again = SampleRecord.model_validate_json(
        SampleRecord(sample=make_sample(["1234567"], "value"), score=score).model_dump_json()
    )
    assert again.score is not None and again.score.scorer_version == 4


def _rescored_by_rule(run: Path, version: int) -> None:
    path = run / "samples.jsonl"
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if data.get("score"):
            data["score"]["scorer_version"] = version
        lines.append(json.dumps(data))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_history_says_the_rule_changed_instead_of_flagging_a_drop(tmp_path: Path):
    results = tmp_path / "results"
    lost = [k for k in grid() if k[0] == 2048][:9]
    old = write_run(results / "n1", "nightly", all_right(), created=100.0)
    _rescored_by_rule(old, 1)
    write_run(results / "n2", "nightly", {**all_right(), **{k: False for k in lost}}, created=200.0)
    result = ctxprobe.history(results, label="nightly", write=False)
    (step,) = result.steps
    assert step.drops == [] and step.note is not None
    assert "the scoring rule changed" in step.note and f"scorer v{SCORER_VERSION}" in step.note and "v1" in step.note
    # the same nights scored by one rule: the drop is flagged
    _rescored_by_rule(old, SCORER_VERSION)
    (step,) = ctxprobe.history(results, label="nightly", write=False).steps
    assert len(step.drops) == 2


def test_compare_warns_that_the_rule_changed(tmp_path: Path):
    old = write_run(tmp_path / "a", "base", all_right())
    _rescored_by_rule(old, 1)
    new = write_run(tmp_path / "b", "cand", all_right())
    result = ctxprobe.compare(old, new, write=False)
    assert any("the scoring rule changed" in w for w in result.warnings)


def test_runs_scored_by_the_rule_before_this_one_are_flagged_not_compared(tmp_path: Path):
    # a run scored by rule 2 (before look-alikes, groupings, denials and corrections were read) against one of now
    old = write_run(tmp_path / "a", "base", all_right())
    _rescored_by_rule(old, SCORER_VERSION - 1)
    new = write_run(tmp_path / "b", "cand", all_right())
    result = ctxprobe.compare(old, new, write=False)
    assert any("the scoring rule changed" in w and f"v{SCORER_VERSION - 1}" in w for w in result.warnings)
