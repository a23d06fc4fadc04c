"""A run folder from before datasets were named by content (its recipes and suite hold `dataset: hf:PATH` and
no `dataset_sha256`), written here with the real RunStore in that shape: it loads, its prompts rebuild byte for
byte (`ctxprobe prompt`), a resume keeps every finished sample, and a new run of the same file against it
(`run --against` plans the baseline's suite) pairs with it prompt for prompt. A fresh run of the file, whose
samples are drawn by content, holds other questions: comparing it with the old run is refused naming the
dataset. Two fresh runs of one file at two places pair prompt for prompt."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.paired.pairing import pair_runs
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import Response, SampleRecord, Score
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.resume import check_resumable
from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.suite import Suite
from tests.tasks.parquet_rows import write_parquet
from tests.tasks.test_mrcr_family import published_rows

ESTIMATE = "estimate:4"


def written(folder: Path, suite: Suite) -> Path:
    """A finished run of `suite` as RunStore writes it, every sample answered (right for even seeds)."""
    store = RunStore(folder)
    builder = builder_for(token_counter(ESTIMATE))
    store.write_manifest(
        RunManifest(suite=suite, tokenizer=ESTIMATE, token_counter=ESTIMATE, mode="completions", status="finished")
    )
    for recipe in suite.recipes(lambda mode: ESTIMATE):
        sample = builder.build(recipe)
        right = recipe.seed % 2 == 0
        text = sample.expected.answers[0] if right else "no idea"
        store.append(
            SampleRecord(
                sample=sample,
                response=Response(endpoint="completions", text=text),
                score=Score(extracted=[text], correct=right, partial=float(right)),
            )
        )
    store.close()
    return folder


def old_suite(path: Path) -> Suite:
    """The suite as `--mrcr hf:PATH` planned it before digests: the path alone names the dataset."""
    suite = suite_from_args(None, "mrcr", None, "8k", "25,75", 3, None, None, data={"mrcr": f"hf:{path}"})
    tasks = [
        t.model_copy(update={"params": {k: v for k, v in t.params.items() if k != "dataset_sha256"}})
        for t in suite.tasks
    ]
    return suite.model_copy(update={"tasks": tasks})


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return write_parquet(tmp_path / "data" / "mrcr.parquet", published_rows())


def test_an_old_run_folder_loads_rebuilds_resumes_and_pairs(dataset: Path, tmp_path: Path) -> None:
    old = written(tmp_path / "old", old_suite(dataset))
    run = load_run(old)
    assert len(run.records) == 6 and all("dataset_sha256" not in r.sample.recipe.params for r in run.records)
    assert all(r.sample.sample_id == r.sample.recipe.sample_id() for r in run.records)  # ids read as written
    record = run.records[3]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["prompt", str(old), record.sample.sample_id, "--sha256", "--allow-path", str(dataset.parent)]) == 0
    assert out.getvalue().strip() == record.sample.prompt_sha256
    planned_again = run.manifest.suite.recipes(lambda mode: ESTIMATE)  # what a resume plans
    assert set(check_resumable(RunStore(old), planned_again)) == {r.sample.sample_id for r in run.records}
    against = load_run(written(tmp_path / "against", load_run(old).manifest.suite))  # `run --against OLD` plans this
    assert {r.sample.sample_id: r.sample.prompt_sha256 for r in against.records} == {
        r.sample.sample_id: r.sample.prompt_sha256 for r in run.records
    }
    pairing = pair_runs(run, against)  # published rows repeat across depths: one pair per distinct prompt
    assert pairing.by_prompt == len({r.sample.prompt_sha256 for r in run.records}) and pairing.by_task == 0


SQUAD = Path(__file__).parents[1] / "tasks" / "fixtures" / "qa" / "squad.json"


def qa_suite(path: Path, digest: bool = True) -> Suite:
    suite = suite_from_args(None, "qa", None, "2k", "25,75", 3, None, None, data={"qa": f"hf:{path}"})
    if digest:
        return suite
    tasks = [
        t.model_copy(update={"params": {k: v for k, v in t.params.items() if k != "dataset_sha256"}})
        for t in suite.tasks
    ]
    return suite.model_copy(update={"tasks": tasks})


def test_a_fresh_run_is_named_by_content_and_pairs_across_places(tmp_path: Path) -> None:
    here, there = tmp_path / "squad.json", tmp_path / "elsewhere" / "renamed.json"
    there.parent.mkdir()
    for path in (here, there):
        path.write_bytes(SQUAD.read_bytes())
    fresh = [load_run(written(tmp_path / name, qa_suite(path))) for name, path in (("here", here), ("there", there))]
    assert fresh[0].records[0].sample.recipe.params["dataset"] != fresh[1].records[0].sample.recipe.params["dataset"]
    assert {r.sample.sample_id: r.sample.prompt_sha256 for r in fresh[0].records} == {
        r.sample.sample_id: r.sample.prompt_sha256 for r in fresh[1].records
    }
    pairing = pair_runs(*fresh)
    assert pairing.by_prompt == len(fresh[0].records) == 6 and pairing.by_task == 0
    old = load_run(written(tmp_path / "old", qa_suite(here, digest=False)))
    assert {r.sample.prompt_sha256 for r in old.records}.isdisjoint(r.sample.prompt_sha256 for r in fresh[0].records)
    with pytest.raises(UserError) as refused:
        pair_runs(old, fresh[0])
    assert f"dataset path hf:{here} vs sha256:" in str(refused.value) and "run --against" in str(refused.value)
