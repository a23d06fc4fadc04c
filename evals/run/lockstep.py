"""`run --against BASELINE --baseline-endpoint URL --max-samples N`: when the baseline run holds too few
samples for its rows to be decided, the baseline's own endpoint is sent the missing ones in lockstep with
the candidate: the baseline's suite planned to N seeds per cell, the same recipes and sample ids, each round
sent to both endpoints at once, a pair counted once both sides are scored.

The baseline's new samples go to a run folder of their own inside the candidate's (`baseline-extension/`),
never into the baseline run: that run stays exactly as it finished (other comparisons and the nightly
history read it), and the extension is kept with the paired run that needed it, so a resume reads both
again. The extension is an ordinary run folder (manifest and samples.jsonl), readable by `compare`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from ctxprobe.evals.records.load import Run
from ctxprobe.evals.records.manifest import public_url
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.options import EndpointOptions, RunOptions
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode, Recipe, TokenizerIdentity

EXTENSION = "baseline-extension"


def check_lockstep(opts: RunOptions) -> None:
    """One line when `--baseline-endpoint` cannot extend anything."""
    if not opts.gate.baseline_endpoint:
        return
    if not opts.gate.against:
        raise UserError("--baseline-endpoint needs --against BASELINE_RUN (the run it extends)")
    if opts.stopping.max_samples is None:
        raise UserError("--baseline-endpoint needs --max-samples N: the seeds per cell to extend the baseline to")


def baseline_endpoint(endpoint: EndpointOptions, urls: list[str]) -> EndpointOptions:
    """How the baseline's endpoint is reached: as the candidate's, at `--baseline-endpoint`'s URLs, with its
    own model and token counter."""
    return endpoint.model_copy(update={"endpoints": list(urls), "token_counter": None, "model": None})


def baseline_recorded(recorded: dict[str, Any], urls: list[str], label: str) -> dict[str, Any]:
    """The extension's options as its manifest records them: the candidate's, sent to the baseline's URLs."""
    return {
        **recorded,
        "endpoints": [public_url(u) for u in urls],
        "token_counter": None,
        "model": None,
        "baseline_endpoint": [],
        "label": label,
        "against": None,
    }


def extension_recipes(baseline: Run, cap: int, tokenizer: Callable[[Mode], TokenizerIdentity | str]) -> list[Recipe]:
    """The baseline suite's recipes up to `cap` seeds per cell that the baseline run never sent (a sample
    it sent and got an error for stays out: its pair is not judged)."""
    suite = baseline.manifest.suite
    tasks = [t.model_copy(update={"samples": max(cap, t.samples or suite.samples)}) for t in suite.tasks]
    planned = suite.model_copy(update={"tasks": tasks}).recipes(
        tokenizer, mode=cast("Mode | None", baseline.manifest.mode)
    )
    held = {r.sample.sample_id for r in baseline.records}
    kept = {(r.sample.recipe.family, r.sample.recipe.haystack) for r in baseline.records}
    return [r for r in planned if r.sample_id() not in held and (r.family, r.haystack) in kept]


def extension_store(run_dir: Path) -> RunStore:
    return RunStore(run_dir / EXTENSION)


def missing_on_baseline(batch: Iterable[Recipe], extension: set[str], store: RunStore) -> list[Recipe]:
    """The recipes of a round whose baseline side the baseline endpoint still has to answer."""
    finished = {sid for sid, r in store.latest_records(needles=False).items() if r.error is None}
    return [r for r in batch if r.sample_id() in extension and r.sample_id() not in finished]


def scored(records: Iterable[SampleRecord]) -> dict[str, SampleRecord]:
    """The baseline side's scored samples, by sample id."""
    return {r.sample.sample_id: r for r in records if r.error is None and r.score is not None}
