"""Synthetic run folders for the compare and history tests: a finished manifest and one record per
(length, depth, seed), each with its own prompt hash, written through the real RunStore."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.runners.response import AnswerLogprobs
from ctxprobe.tasks.sample import sha256_text
from ctxprobe.tasks.suite import Suite, SuiteTask
from tests.evals.factories import make_record
from tests.unsynced import unsynced

LENGTHS = (1024, 2048)
DEPTHS = (0.0, 100.0)
SEEDS = range(10)
Key = tuple[int, float, int]


def grid() -> list[Key]:
    return [(n, d, s) for n in LENGTHS for d in DEPTHS for s in SEEDS]


def record(
    key: Key, outcome: bool | ErrorKind, partial: float | None = None, tokenizer: str = "estimate:4"
) -> SampleRecord:
    length, depth, seed = key
    if isinstance(outcome, ErrorKind):
        rec = make_record(None, error=outcome, context_tokens=length, depth=depth, seed=seed)
    else:
        rec = make_record(outcome, partial, context_tokens=length, depth=depth, seed=seed)
    recipe = rec.sample.recipe.model_copy(update={"tokenizer": tokenizer})
    sample = rec.sample.model_copy(
        update={
            "recipe": recipe,
            "sample_id": recipe.sample_id(),
            "prompt_sha256": sha256_text(recipe.canonical_json()),
        }
    )
    return rec.model_copy(update={"sample": sample})


def answer_logprobs(p: float) -> AnswerLogprobs:
    """Answer probabilities as an engine would give them: a two-token gold answer whose logprobs sum to log p."""
    half = math.log(p) / 2
    return AnswerLogprobs(gold=" 2465901", logprobs=[half, half], method="generated")


def write_run(
    path: Path,
    label: str,
    outcomes: dict[Key, bool | ErrorKind],
    *,
    created: float = 1.0,
    suite: str = "quick",
    tokenizer: str = "estimate:4",
    partial: dict[Key, float] | None = None,
    status: str = "finished",
    p_answer: dict[Key, float | str] | None = None,
    edit: Callable[[Key, SampleRecord], SampleRecord] | None = None,
    manifest_fields: dict[str, Any] | None = None,
) -> Path:
    """A run folder at `path` with one record per key of `outcomes` (`p_answer`: each key's answer
    probability, or 'unavailable'; `edit`: each record as written, from its key and the record made;
    `manifest_fields`: the manifest's other fields)."""
    store = RunStore(path)
    lengths = sorted({k[0] for k in outcomes}) or [1024]
    manifest = RunManifest(
        label=label,
        created=created,
        status=status,
        tokenizer=tokenizer,  # type: ignore[arg-type]
        suite=Suite(name=suite, lengths=lengths, depths=list(DEPTHS), tasks=[SuiteTask(family="niah")]),
        **(manifest_fields or {}),
    )
    store.write_manifest(manifest)
    with unsynced():  # a fixture: no fsync per record (tests/unsynced.py)
        for key, outcome in outcomes.items():
            rec = record(key, outcome, (partial or {}).get(key), tokenizer)
            p = (p_answer or {}).get(key)
            if p is not None:
                rec = rec.model_copy(update={"logprobs": p if isinstance(p, str) else answer_logprobs(p)})
            store.append(edit(key, rec) if edit else rec)
    store.close()
    return path


def all_right() -> dict[Key, bool | ErrorKind]:
    return {k: True for k in grid()}
