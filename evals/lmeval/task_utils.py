"""What an exported lm-eval task directory's `utils.py` calls: its data loader and ctxprobe's scorer.

lm-eval hands `process_results` one doc and the model's output; the doc carries the whole sample
(recipe, expected answers, answer prefix), so the score is `score_sample`'s, the same as `ctxprobe run`
gives for the same output: `exact` (correct on the extracted answer) and `partial` credit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.tasks.sample import Sample

METRICS = ("exact", "partial")


def load_data(path: Path) -> dict[str, Any]:
    """One exported data file as lm-eval's `custom_dataset` must return it: `{"test": Dataset}`."""
    import datasets

    return {"test": datasets.Dataset.from_json(str(path))}


def doc_sample(doc: dict[str, Any]) -> Sample:
    """The sample a doc was exported from (its prompt put back, so the hash can be checked)."""
    sample = Sample.model_validate_json(doc["sample_json"])
    return sample.model_copy(update={"prompt": doc["prompt"]})


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """lm-eval's per-doc metrics, from ctxprobe's own scorer."""
    from ctxprobe.evals.scoring.score import score_sample

    score = score_sample(doc_sample(doc), results[0])
    return {"exact": float(score.correct), "partial": score.partial}
