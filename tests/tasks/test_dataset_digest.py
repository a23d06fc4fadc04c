"""Datasets the user brings (qa's SQuAD/HotpotQA files, mrcr's and graphwalk's published parquet) are named by
their content: the same file at two places gives the same sample ids, needles and prompts; another content
gives others; a recipe whose file moved reads it where this process saw that content, and one whose file
changed is refused. Recipes from before digests keep the identity (path included) they were written with.
The corpus: the qa fixtures, and the mrcr and graphwalk rows those families' tests generate."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.dataset_digest import content_sha256
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.variant import variant_params
from tests.tasks.parquet_rows import write_parquet
from tests.tasks.test_graphwalk_family import published_rows as graphwalk_rows
from tests.tasks.test_mrcr_family import published_rows as mrcr_rows

QA = Path(__file__).parent / "fixtures" / "qa"
ESTIMATE = "estimate:4"


def dataset(kind: str, folder: Path) -> Path:
    """One dataset of each kind, written into `folder` (made here)."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "mrcr":
        return write_parquet(folder / "mrcr.parquet", mrcr_rows())
    if kind == "graphwalk":
        return write_parquet(folder / "graphwalks.parquet", graphwalk_rows())
    return Path(shutil.copy(QA / f"{kind}.json", folder / f"{kind}-copy.json"))


def planned(kind: str, path: Path) -> list[Recipe]:
    """The recipes a run of that dataset plans (through the command line's suite: `--qa`, `--mrcr`, `--params`)."""
    family = "qa" if kind in ("squad", "hotpotqa") else kind
    data = {"qa": f"hf:{path}"} if family == "qa" else {"mrcr": f"hf:{path}"} if family == "mrcr" else {}
    params = f"dataset=hf:{path}" if family == "graphwalk" else None
    lengths = "8k" if family == "mrcr" else "2k"
    suite = suite_from_args(None, family, params, lengths, "25,75", 3, None, None, data=data)
    return suite.recipes(lambda mode: ESTIMATE)


def built(recipes: list[Recipe]) -> list[str]:
    builder = builder_for(token_counter(ESTIMATE))
    return [builder.build(r).prompt_sha256 for r in recipes]


KINDS = ["squad", "hotpotqa", "mrcr", "graphwalk"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_file_anywhere_gives_the_same_samples(kind: str, tmp_path: Path) -> None:
    here, there = dataset(kind, tmp_path / "a"), dataset(kind, tmp_path / "b" / "deeper")
    left, right = planned(kind, here), planned(kind, there)
    assert [r.params["dataset"] for r in left] != [r.params["dataset"] for r in right]  # read where it lies
    assert {r.params["dataset_sha256"] for r in left} == {hashlib.sha256(here.read_bytes()).hexdigest()}
    assert [r.sample_id() for r in left] == [r.sample_id() for r in right]
    assert [r.task_key() for r in left] == [r.task_key() for r in right]
    assert built(left) == built(right)
    assert len(set(built(left))) > 1  # seeds and depths still make different prompts
    label = variant_params(left[0].params, left[0].family)
    assert label["dataset"].startswith("sha256:") and str(here) not in json.dumps(label)


@pytest.mark.parametrize("kind", KINDS)
def test_other_content_is_another_dataset_and_a_changed_file_is_refused(kind: str, tmp_path: Path) -> None:
    """(Contents no other test writes: a file of the same content elsewhere would be read in its place.)"""
    path = dataset(kind, tmp_path / "a")

    def rewrite(cut: int) -> None:
        if path.suffix == ".json":
            with open(path, "ab") as f:  # the same rows, other bytes
                f.write(b"\n" * cut)
        else:
            write_parquet(path, (mrcr_rows() if kind == "mrcr" else graphwalk_rows())[:-cut])

    rewrite(2)
    before = planned(kind, path)
    rewrite(1)
    after = planned(kind, path)
    assert before[0].params["dataset_sha256"] != after[0].params["dataset_sha256"]
    assert {r.sample_id() for r in before}.isdisjoint(r.sample_id() for r in after)
    with pytest.raises(
        UserError,
        match="holds other content: the recipe names the dataset of content sha256 "
        + before[0].params["dataset_sha256"][:12],
    ):
        built(before[:1])


def test_a_moved_file_is_read_where_this_process_saw_its_content(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    old = write_parquet(tmp_path / "old" / "mrcr.parquet", mrcr_rows()[:-3])  # a content no other test writes
    recipes = planned("mrcr", old)
    prompts = built(recipes[:2])
    new = tmp_path / "new" / "renamed.parquet"
    new.parent.mkdir()
    old.rename(new)
    with pytest.raises(UserError, match=r"MRCR dataset 'hf:.*mrcr.parquet' is not there: .*give that file"):
        built(recipes[:1])
    assert planned("mrcr", new)[0].sample_id() == recipes[0].sample_id()  # planning it there remembers it
    assert built(recipes[:2]) == prompts


def test_a_folder_is_named_by_its_files_names_and_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        write_parquet(folder / "part-0.parquet", mrcr_rows()[:5])
        write_parquet(folder / "part-1.parquet", mrcr_rows()[5:])
    assert content_sha256(a) == content_sha256(b)
    (b / "part-1.parquet").rename(b / "part-2.parquet")
    assert content_sha256(a) != content_sha256(b)


def test_a_recipe_from_before_digests_keeps_its_identity(tmp_path: Path) -> None:
    """No `dataset_sha256`: the path stays in every key, computed here as ids were always computed."""
    path = dataset("mrcr", tmp_path)
    recipe = Recipe(
        family="mrcr", params={"needles": 4, "dataset": f"hf:{path}"}, context_tokens=8192, seed=2, tokenizer=ESTIMATE
    )
    fields = recipe.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    assert recipe.sample_id() == digest and "dataset_sha256" not in recipe.params
    moved = recipe.model_copy(update={"params": {"needles": 4, "dataset": "hf:/elsewhere/mrcr.parquet"}})
    assert moved.sample_id() != recipe.sample_id()
    assert built([recipe]) == built([recipe])


def test_a_generated_task_has_no_digest_and_keeps_its_parameters() -> None:
    """Families without a dataset write no `dataset_sha256` (their ids and prompts stay as they were)."""
    suite = suite_from_args(None, "mrcr", None, "2k", "50", 1, None, None)
    recipe = suite.recipes(lambda mode: ESTIMATE)[0]
    assert "dataset_sha256" not in recipe.params and recipe.params.get("dataset") is None
