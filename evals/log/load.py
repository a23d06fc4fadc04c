"""`ctxprobe.load_run(path)`: a run folder as typed values — its manifest, its records (the last one of
each sample id) and a pandas DataFrame with one row per sample."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxprobe.evals.log.manifest import RunManifest
from ctxprobe.evals.log.record import SampleRecord
from ctxprobe.evals.log.store import RunStore

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Run:
    dir: Path
    manifest: RunManifest
    records: list[SampleRecord]

    def frame(self) -> pd.DataFrame:
        """One row per sample: the task's coordinates as columns, its outcome, and the endpoint's figures."""
        import pandas as pd

        return pd.DataFrame([record_row(r) for r in self.records])


def load_run(path: str | Path) -> Run:
    """Read a run folder (one line naming the problem when it is not one)."""
    store = RunStore(Path(path))
    manifest = store.load_manifest()
    return Run(dir=store.dir, manifest=manifest, records=list(store.latest_records().values()))


def record_row(record: SampleRecord) -> dict[str, Any]:
    sample, recipe, response, score = record.sample, record.sample.recipe, record.response, record.score
    row: dict[str, Any] = {
        "sample_id": sample.sample_id, "family": recipe.family, "haystack": recipe.haystack,
        "context_tokens": recipe.context_tokens, "depth": recipe.depth, "seed": recipe.seed, "mode": recipe.mode,
        "tokenizer": recipe.tokenizer, "generator_version": recipe.generator_version,
    }
    row.update({f"param_{k}": v for k, v in sorted(recipe.params.items())})
    row.update({
        "prompt_sha256": sample.prompt_sha256, "planned_tokens": sample.planned_tokens,
        "prompt_tokens": response.prompt_tokens if response else None,
        "cached_tokens": response.cached_tokens if response else None,
        "latency_s": response.latency_s if response else None, "ttft_s": response.ttft_s if response else None,
        "endpoint": response.endpoint if response else None,
        "correct": score.correct if score else None, "partial": score.partial if score else None,
        "expected": " | ".join(sample.expected.answers), "extracted": " | ".join(score.extracted) if score else None,
        "error": record.error.value if record.error else None, "attempts": record.attempts,
    })
    return row
