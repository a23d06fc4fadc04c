"""`ctxprobe export --format hf`: the samples as a Hugging Face dataset (parquet through `datasets`),
for users who keep their evaluation data on the hub or feed it to other harnesses. One row per sample:
the exact prompt, its answers and every recipe field as a typed column (never a string to split)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.evals.lmeval.source import ExportSource
from ctxprobe.evals.records.safe_write import writing
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Sample

PARQUET = "data.parquet"


@dataclass(frozen=True)
class HfExport:
    dir: Path  # `datasets.load_from_disk(dir)`
    parquet: Path  # `load_dataset("parquet", data_files=str(parquet))`
    samples: int


def hf_row(sample: Sample) -> dict[str, Any]:
    recipe = sample.recipe
    return {
        "sample_id": sample.sample_id,
        "prompt": sample.prompt,
        "prompt_sha256": sample.prompt_sha256,
        "answers": list(sample.expected.answers),
        "expected_kind": sample.expected.kind,
        "question": sample.question,
        "answer_prefix": sample.answer_prefix,
        "max_tokens": sample.max_tokens,
        "family": recipe.family,
        "params_json": json.dumps(recipe.params, sort_keys=True),
        "haystack": recipe.haystack,
        "context_tokens": recipe.context_tokens,
        "depth": float(recipe.depth),
        "seed": recipe.seed,
        "mode": recipe.mode,
        "tokenizer": recipe.tokenizer,
        "generator_version": recipe.generator_version,
        "planned_tokens": sample.planned_tokens,
        "sample_json": sample.model_dump_json(),
    }


def write_hf_dataset(source: ExportSource, out_dir: str | Path) -> HfExport:
    """Write `out_dir` (new or empty) as a `save_to_disk` dataset, plus `data.parquet` beside it."""
    import datasets  # slow to import: only this export needs it

    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"export folder {out} exists and is not empty")
    dataset = datasets.Dataset.from_list([hf_row(s) for s in source.samples])
    with writing(out):
        dataset.save_to_disk(str(out))
        dataset.to_parquet(str(out / PARQUET))
    return HfExport(dir=out, parquet=out / PARQUET, samples=len(source.samples))
