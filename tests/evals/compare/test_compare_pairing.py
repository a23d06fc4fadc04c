"""Pairing two synthetic runs and the rows that come out: identical runs, one flipped sample, errors,
another tokenizer, and runs with nothing in common."""

from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.tasks.sample import sha256_text
from tests.evals.compare.synthetic import all_right, grid, write_run


def _pooled(result, length):
    return next(r for r in result.family_rows() if r.context_tokens == length)


def test_identical_runs_give_zero_difference_and_p_one(tmp_path: Path):
    outcomes = {k: k[2] % 3 != 0 for k in grid()}  # some wrong answers, the same in both
    base = write_run(tmp_path / "a", "base", outcomes)
    cand = write_run(tmp_path / "b", "cand", outcomes)
    result = ctxprobe.compare(base, cand, write=False)
    assert result.pairings[0].pairs == 40 and result.pairings[0].by_prompt == 40
    assert all(r.diff == 0 and r.p_value == 1.0 and not r.significant for r in result.rows)
    assert all(r.partial_diff == 0 for r in result.rows)
    assert {r.level for r in result.rows} == {"cell", "family", "family_length"}
    assert len(result.family_rows()) == 2 and len([r for r in result.rows if r.level == "cell"]) == 4
    assert result.examples == [] and result.exit_code == 0


def test_one_flipped_sample_is_exactly_that(tmp_path: Path):
    flipped = (2048, 100.0, 4)
    base = write_run(tmp_path / "a", "base", all_right())
    cand = write_run(tmp_path / "b", "cand", {**all_right(), flipped: False})
    result = ctxprobe.compare(base, cand, write=False)
    row = _pooled(result, 2048)
    assert (row.n, row.base_correct, row.cand_correct, row.base_only, row.cand_only) == (20, 20, 19, 1, 0)
    assert row.diff == pytest.approx(-1 / 20) and row.p_value == 1.0 and row.diff_lo < row.diff < row.diff_hi
    assert _pooled(result, 1024).diff == 0
    cells = [r for r in result.rows if r.level == "cell" and r.diff != 0]
    assert [(c.context_tokens, c.depth, c.diff) for c in cells] == [(2048, 100.0, pytest.approx(-0.1))]
    assert [(e.worse, e.base_extracted, e.cand_extracted) for e in result.examples] == [
        ("candidate", ["1234567"], ["7654321"])
    ]


def test_errors_leave_the_pairs_and_are_counted_by_kind_per_side(tmp_path: Path):
    keys = grid()
    base = write_run(tmp_path / "a", "base", {**all_right(), keys[0]: ErrorKind.timeout})
    cand = write_run(
        tmp_path / "b",
        "cand",
        {**all_right(), keys[1]: ErrorKind.rejected_too_long, keys[2]: ErrorKind.rejected_too_long},
    )
    pairing = ctxprobe.compare(base, cand, write=False).pairings[0]
    assert pairing.pairs == 37
    assert pairing.errored_base == {"timeout": 1} and pairing.errored_cand == {"rejected_too_long": 2}


def test_another_tokenizer_pairs_by_task_fields_and_says_so(tmp_path: Path):
    base = write_run(tmp_path / "a", "base", all_right())
    cand = write_run(tmp_path / "b", "cand", all_right(), tokenizer="hf:other")
    result = ctxprobe.compare(base, cand, write=False)
    assert result.pairings[0].by_task == 40 and result.pairings[0].by_prompt == 0
    assert len(result.warnings) == 1 and "PROMPTS DIFFER" in result.warnings[0]


def test_runs_with_no_overlap_are_refused_naming_the_first_difference(tmp_path: Path):
    base = write_run(tmp_path / "a", "base", {k: True for k in grid() if k[0] == 1024})
    other_lengths = write_run(tmp_path / "b", "cand", {k: True for k in grid() if k[0] == 2048})
    other_suite = write_run(tmp_path / "c", "cand", {k: True for k in grid() if k[0] == 2048}, suite="nightly")
    with pytest.raises(ctxprobe.UserError, match="lengths 1K vs 2K"):
        ctxprobe.compare(base, other_lengths, write=False)
    with pytest.raises(ctxprobe.UserError, match="suite 'quick' vs 'nightly'"):
        ctxprobe.compare(base, other_suite, write=False)


def _recast(run_dir: Path, **recipe_fields: object) -> None:
    """Rewrite a run's records as if made with other recipe fields (mode, params, seed...)."""
    path = run_dir / "samples.jsonl"
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = SampleRecord.model_validate_json(line)
        recipe = rec.sample.recipe.model_copy(
            update={k: (v(rec.sample.recipe) if callable(v) else v) for k, v in recipe_fields.items()}
        )
        sample = rec.sample.model_copy(
            update={
                "recipe": recipe,
                "sample_id": recipe.sample_id(),
                "prompt_sha256": sha256_text(recipe.canonical_json()),
            }
        )
        lines.append(rec.model_copy(update={"sample": sample}).model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "fields,reason,not_said",
    [
        ({"mode": "chat"}, "mode completions vs chat (chat and completions prompts differ", "task parameters"),
        ({"params": {"template": "ruler"}}, "template ctxprobe vs ruler", "task parameters"),
        ({"seed": lambda r: r.seed + 100}, "seeds 0,1,2,3,4,5 (+4 more) vs 100,101", "mode"),
        ({"generator_version": "9"}, "generator version niah v3 vs niah v9", "seeds"),
    ],
)
def test_no_overlap_names_each_real_reason_on_its_own_line(tmp_path: Path, fields, reason, not_said):
    base = write_run(tmp_path / "a", "base", all_right())
    cand = write_run(tmp_path / "b", "cand", all_right())
    _recast(cand, **fields)
    with pytest.raises(ctxprobe.UserError) as refused:
        ctxprobe.compare(base, cand, write=False)
    lines = str(refused.value).splitlines()
    assert any(line.strip().startswith(reason) for line in lines[1:]), lines
    assert not any(line.strip().startswith(not_said) for line in lines), lines


def test_each_candidate_is_its_own_family_of_tests(tmp_path: Path):
    lost = [k for k in grid() if k[0] == 2048][:8]
    base = write_run(tmp_path / "a", "base", all_right())
    worse = write_run(tmp_path / "b", "worse", {**all_right(), **{k: False for k in lost}})
    same = write_run(tmp_path / "c", "same", all_right())
    alone = ctxprobe.compare(base, worse, write=False)
    both = ctxprobe.compare(base, worse, same, fail_if_drop=0.1, write=False)
    assert [c.label for c in both.candidates] == ["worse", "same"]
    assert [r.p_holm for r in both.family_rows("worse")] == [r.p_holm for r in alone.family_rows("worse")]
    # the family pooled over its lengths (context_tokens 0) fails with its 2K row
    assert [(r.candidate, r.context_tokens) for r in both.failed] == [("worse", 0), ("worse", 2048)]
    assert both.exit_code == 1


def test_a_truncated_answer_leaves_the_pairs_instead_of_counting_as_a_drop(tmp_path: Path):
    keys = grid()
    base = write_run(tmp_path / "a", "base", all_right())
    cand = write_run(
        tmp_path / "b", "cand", {**all_right(), keys[0]: ErrorKind.truncated, keys[1]: ErrorKind.truncated}
    )
    result = ctxprobe.compare(base, cand, write=False)
    assert result.pairings[0].pairs == 38 and result.pairings[0].errored_cand == {"truncated": 2}
    assert all(r.diff == 0 for r in result.rows)  # not two wrong answers
