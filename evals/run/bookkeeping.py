"""The run's manifest, from its start (what runs, where, how) to its end (how many samples are done, errored,
served at another length; the prefix cache's use), and what a run that sent nothing leaves behind: nothing."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from ctxprobe.evals.records.lock import LOCK
from ctxprobe.evals.records.manifest import LogprobTotals, RunManifest, ctxprobe_version, public_url
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.records.write_errors import RESERVE
from ctxprobe.evals.run.send.serving import Served
from ctxprobe.runners.response import LOGPROBS_UNAVAILABLE, AnswerLogprobs
from ctxprobe.tasks.suite import Suite


# Options a resume may change: where and how to reach the endpoint (not the mode, which is part of the plan)
# and how the run reports. What to run always comes from the run.
def run_manifest(
    recorded: dict[str, Any],
    label: str,
    suite: Suite,
    served: Served,
    tokenizer: str,
    previous: RunManifest | None,
    planned: int,
) -> RunManifest:
    """The manifest a run starts with (a resumed run's, updated): `recorded`, the options as the plan keeps
    them; what runs, where, by which tokenizer; status running."""
    base: dict[str, Any] = previous.model_dump() if previous is not None else {"created": time.time()}
    base.update(
        schema_version=RunManifest.model_fields["schema_version"].default,
        command="run",
        ctxprobe_version=ctxprobe_version(),
        status="running",
        updated=time.time(),
        label=label,
        endpoints=[public_url(u) for u in served.config.base_urls],
        model=served.model,
        engine=served.engine,
        mode=served.mode,
        suite=suite,
        seeds=sorted({suite.seed + i for i in range(max(t.samples or suite.samples for t in suite.tasks))}),
        tokenizer=tokenizer,
        token_counter=served.counter_spec,
        api_key_env=served.config.api_key_env,
        options=recorded,
        samples_planned=planned,
    )
    return RunManifest.model_validate(base)


def count_samples(manifest: RunManifest, latest: dict[str, SampleRecord]) -> None:
    """The manifest's counts of the samples a run folder holds."""
    manifest.samples_done = sum(1 for r in latest.values() if r.error is None)
    manifest.samples_errored = sum(1 for r in latest.values() if r.error is not None)
    manifest.prompt_tokens_sent = sum(r.sample.planned_tokens for r in latest.values())


def logprob_totals(latest: dict[str, SampleRecord], top: int | None) -> LogprobTotals | None:
    """The manifest's account of the samples' answer probabilities; None where no sample asked for them."""
    records = list(latest.values())
    measured = [r.logprobs for r in records if isinstance(r.logprobs, AnswerLogprobs)]
    unavailable = sum(1 for r in records if r.logprobs == LOGPROBS_UNAVAILABLE)
    unmeasured = sum(1 for r in records if r.logprobs is None and r.logprobs_detail is not None)
    if not measured and not unavailable and not unmeasured:
        return None
    methods: dict[str, int] = {}
    for lp in measured:
        methods[lp.method] = methods.get(lp.method, 0) + 1
    return LogprobTotals(
        samples_measured=len(measured),
        samples_unmeasured=unmeasured,
        samples_unavailable=unavailable,
        methods=methods,
        extra_requests=sum(lp.extra_requests for lp in measured),
        extra_prompt_tokens=sum(lp.extra_prompt_tokens for lp in measured),
        top_logprobs=top,
    )


def cache_use(records: list[SampleRecord]) -> dict[str, float] | None:
    """How much of the prompt tokens the server said came from its prefix cache, and the prefill seconds that
    saved at the run's own prefill rate (uncached tokens per second of time to first token)."""
    seen = [
        r.response
        for r in records
        if r.response is not None and r.response.cached_tokens is not None and r.response.prompt_tokens
    ]
    if not seen:
        return None
    prompt = sum(r.prompt_tokens or 0 for r in seen)
    cached = sum(r.cached_tokens or 0 for r in seen)
    timed = [r for r in seen if r.ttft_s or r.latency_s]  # time to first token; the whole latency unstreamed
    fresh_s = sum(r.ttft_s or r.latency_s or 0.0 for r in timed)
    rate = sum((r.prompt_tokens or 0) - (r.cached_tokens or 0) for r in timed) / fresh_s if fresh_s else None
    use: dict[str, float] = {"prompt_tokens": prompt, "cached_tokens": cached, "cached_share": cached / prompt}
    if rate:
        use.update(prefill_tokens_per_s=rate, prefill_s_saved=cached / rate)
    return use


def remove_if_empty(store: RunStore) -> None:
    """Remove a folder this run made that holds nothing but its lock file (bad input found late)."""
    with contextlib.suppress(OSError):
        if {p.name for p in store.dir.iterdir()} <= {LOCK, RESERVE}:
            (store.dir / LOCK).unlink(missing_ok=True)
            store.dir.rmdir()


def drop_unsent(store: RunStore) -> None:
    """Remove what a run that sent nothing wrote into its new folder (its manifest, an empty samples file);
    the folder itself goes once the lock is released (`remove_if_empty`)."""
    for name in ("manifest.json", "samples.jsonl"):
        path = store.dir / name
        if path.exists() and (name == "manifest.json" or path.stat().st_size == 0):
            path.unlink()
