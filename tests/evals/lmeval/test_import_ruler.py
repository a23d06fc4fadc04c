"""A RULER `niah_single_1` sample log (captured once with lm-eval 0.4.13 at 1K against the embedded
Gemma 3 270M, 12 docs; tests/evals/fixtures/lmeval_ruler/README.md says how) comes in as a ctxprobe
run: RULER's substring score kept, ctxprobe's exact score beside it, the needle found in each doc."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.lmeval.importer import import_lm_eval
from ctxprobe.evals.lmeval.ruler import SUBSTRING, ruler_substring
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.scoring.score import score_sample

FIXTURE = Path(__file__).parents[1] / "fixtures" / "lmeval_ruler"


def logged_rows(folder: Path) -> list[dict[str, Any]]:
    log = next(folder.glob("samples_niah_single_1_*.jsonl"))
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_ruler_log_becomes_a_run(tmp_path: Path) -> None:
    rows = logged_rows(FIXTURE)
    result = import_lm_eval([FIXTURE], results_dir=tmp_path)
    run = load_run(result.run_dir)
    assert len(run.records) == len(rows) == 12
    by_doc = {r.sample.recipe.seed: r for r in run.records}
    for row in rows:
        record = by_doc[row["doc_id"]]
        output, answers = row["resps"][0][0], row["doc"]["outputs"]
        assert record.sample.recipe.family == "ruler" and record.sample.recipe.params == {"task": "niah_single_1"}
        assert record.sample.recipe.context_tokens == row["doc"]["max_length"] == 1024
        assert record.reference_scores[SUBSTRING] == row["1024"] == ruler_substring(output, answers)
        assert record.score == score_sample(record.sample, output)
        assert record.sample.prompt_sha256 == row["prompt_hash"]  # lm-eval hashes what it sent
        needle = record.sample.needles[0]
        assert row["doc"]["input"][needle.char_offset :].startswith(answers[0])
        assert answers[0] in needle.text and 0.0 <= needle.depth_pct <= 100.0
        assert abs(record.sample.recipe.depth - needle.depth_pct) <= 5.0
    assert len({r.sample.recipe.depth for r in run.records}) > 1  # RULER spreads its needles over depths
    exact, substring = result.ruler_accuracy() or (None, None)
    assert exact == sum(bool(r.score and r.score.correct) for r in run.records) / 12
    assert substring == sum(row["1024"] for row in rows) / 12


def test_an_answer_with_an_extra_digit_splits_the_scorers(tmp_path: Path) -> None:
    """The trap seen on a real engine: `16462207` for `6462207` is a substring hit, not the answer."""
    rows = logged_rows(FIXTURE)
    answer = rows[0]["doc"]["outputs"][0]
    rows[0]["resps"] = [[f" 1{answer}."]]
    del rows[0]["1024"]  # the edited answer was never scored by RULER: the importer scores it as RULER does
    folder = tmp_path / "log"
    folder.mkdir()
    for source in FIXTURE.glob("results_*.json"):
        shutil.copy(source, folder)
    log_name = next(FIXTURE.glob("samples_*.jsonl")).name
    (folder / log_name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = import_lm_eval([folder], results_dir=tmp_path / "results")
    first = next(r for r in result.records if r.sample.recipe.seed == rows[0]["doc_id"])
    assert first.reference_scores[SUBSTRING] == 1.0 and first.score is not None and not first.score.correct
    assert [d.sample_id for d in result.disagreements] == [first.sample.sample_id]


def test_refuses_a_folder_without_logs(tmp_path: Path) -> None:
    from ctxprobe.tasks.errors import UserError

    with pytest.raises(UserError, match="no lm-eval sample logs"):
        import_lm_eval([tmp_path], results_dir=tmp_path / "results")
