"""`export --format hf` writes a dataset `datasets` loads both ways, with the exact prompts; and a local
parquet file or folder serves as an `hf:` haystack without the hub."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.lmeval.api import export_hf
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack import make_haystack
from ctxprobe.tasks.sample import Recipe, Sample, sha256_text

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_hf(
        "quick", tmp_path_factory.mktemp("hf") / "ds", token_counter="estimate", lengths="1k", depths="0,100"
    ).dir


def test_dataset_loads_from_disk_and_from_parquet(exported: Path) -> None:
    on_disk = datasets.load_from_disk(str(exported))
    parquet = datasets.load_dataset("parquet", data_files=str(exported / "data.parquet"), split="train")
    assert on_disk.num_rows == parquet.num_rows == 8  # quick at 1k: 4 tasks x 2 depths
    assert on_disk.to_list() == parquet.to_list()
    for row in on_disk:
        sample = Sample.model_validate_json(row["sample_json"])
        assert sha256_text(row["prompt"]) == row["prompt_sha256"] == sample.prompt_sha256
        assert row["answers"] == sample.expected.answers
        assert (row["context_tokens"], row["depth"], row["family"]) == (
            sample.recipe.context_tokens,
            sample.recipe.depth,
            sample.recipe.family,
        )
        assert build_sample(sample.recipe).prompt == row["prompt"]  # the recipe rebuilds the same bytes


def test_local_parquet_is_an_hf_haystack(exported: Path) -> None:
    parquet = exported / "data.parquet"
    by_file = make_haystack(f"hf:{parquet}:train:prompt")
    by_dir = make_haystack(f"hf:{exported}:train:prompt")
    first = datasets.load_dataset("parquet", data_files=str(parquet), split="train")[0]["prompt"]
    assert by_file.units(0, 3) == by_dir.units(0, 3)
    assert by_file.units(0, 1)[0].strip() in first
    sample = build_sample(
        Recipe(
            family="niah",
            params={"variant": "single"},
            haystack=f"hf:{parquet}:train:prompt",
            context_tokens=1024,
            depth=50.0,
        )
    )
    assert sample.needles[0].answer in sample.prompt


def test_local_folder_without_parquet_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no \.parquet"):
        make_haystack(f"hf:{tmp_path}")
