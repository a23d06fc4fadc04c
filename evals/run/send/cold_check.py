"""Sending the cache-path control's checks: each chosen sample (`evals.run.cache_check.choose`) whose served
answer is scored is built again (the same recipe gives the same prompt) and sent once more with the engine's
per-request cold prefill (its adapter's `cold_prefill`: vLLM a fresh `cache_salt`, llama-server
`cache_prompt: false`), with the same answer budget, seed and chain; where the run measures answer
log-probabilities, so is the cold answer, through the same cold path (the extra one-token requests carry the
check's salt: they may reuse the cold prompt, never the run's cache). Each check is appended to
`cache_checks.jsonl` as it finishes. The checks go after the run's own requests, so none of them disturbs the
cache the run is measured with; a run stopped before its checks (or resumed) sends the chosen checks that have
none yet, and the manifest counts those still missing as unchecked."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.evals.compare.paired.kl import pair_kl
from ctxprobe.evals.records.cache_check import CacheCheckRecord, append_check, cold_id, read_checks
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.answer_budget import AnswerBudget
from ctxprobe.evals.run.send.logprobs import LogprobCapture, wanted
from ctxprobe.evals.run.send.loop import EndpointLost, record_of
from ctxprobe.evals.run.send.serving import Served
from ctxprobe.runners.daemon_threads import in_daemon_thread
from ctxprobe.runners.endpoint import EndpointClient, EndpointError
from ctxprobe.runners.engines import adapter, known_engines
from ctxprobe.runners.retry import CallFailed
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.sample import Recipe


def cold_path(engine: str) -> tuple[str | None, str]:
    """The engine's per-request cold path as said in lines (None where it has none) and, where it has none,
    the one line saying so and what it offers instead."""
    if engine not in known_engines():
        return None, f"engine {engine!r}: no per-request cold prefill is known for it"
    found = adapter(engine)
    if found.cold_path is None:
        return None, f"{engine}: {found.no_cold_path}"
    return found.cold_path, ""


@dataclass
class _ColdCapture(LogprobCapture):
    """The run's logprob measure, its extra requests sent down the check's cold path."""

    cold: dict[str, Any] = field(default_factory=dict)

    @property
    def answer_body(self) -> dict[str, Any]:
        return {**self.adapter.logprob_body, **self.cold}


async def send_checks(
    chosen: Sequence[Recipe], served: Served, store: RunStore, budget: AnswerBudget, latest: Mapping[str, SampleRecord]
) -> int:
    """Send the chosen checks that have no record yet, beside `latest` (the latest record of each sample: outlines,
    as a check reads the served answer, never its needles); returns how many were sent. An endpoint that stops
    answering stops them as `EndpointLost` (the run resumes them)."""
    engine = served.engine.engine
    how, _ = cold_path(engine)
    if how is None:
        return 0
    done = read_checks(store.dir)
    todo = [r for r in chosen if r.sample_id() not in done and _scored(latest.get(r.sample_id()))]
    want = wanted(served.logprobs, engine)
    sent = 0
    for mode in dict.fromkeys(r.mode for r in todo):
        config = served.config.model_copy(update={"mode": mode})
        async with EndpointClient(config) as client:
            for recipe in (r for r in todo if r.mode == mode):
                cached = latest[recipe.sample_id()]
                check = await _one(client, recipe, cached, served, budget, how, want)
                append_check(store.dir, check)
                sent += 1
    if sent:
        print(f"ctxprobe: cache path: {sent} cold re-sends ({how})", file=sys.stderr)
    return sent


def _scored(record: SampleRecord | None) -> bool:
    return record is not None and record.error is None and record.score is not None and record.response is not None


async def _one(
    client: EndpointClient,
    recipe: Recipe,
    cached: SampleRecord,
    served: Served,
    budget: AnswerBudget,
    how: str,
    want: bool | None,
) -> CacheCheckRecord:
    cold = adapter(served.engine.engine).cold_prefill() or {}
    assert cached.response is not None and cached.score is not None
    base = CacheCheckRecord(
        sample_id=recipe.sample_id(),
        cold_id=cold_id(recipe.sample_id()),
        chain=chain_key(recipe),
        context_tokens=recipe.context_tokens,
        depth=recipe.depth,
        how=how,
        cached_text=cached.response.text,
        cached_correct=cached.score.correct,
        cached_tokens=cached.response.cached_tokens,
    )
    try:
        sample = await in_daemon_thread(build_sample, recipe, served.counter)
    except CallFailed as exc:  # the server's token counter stopped serving: resumable
        raise EndpointLost(str(exc)) from None
    max_tokens = budget.max_tokens(sample)
    extra = {**budget.extra_body(), **cold}
    asked: dict[str, Any] = {}
    capture = None
    if want:
        capture = _ColdCapture(client, served.engine.engine, served.logprobs.top_logprobs, cold=cold)
        extra = {**extra, **capture.answer_body}
        asked["logprobs"] = capture.top
    try:
        response = await client.send(
            sample.prompt,
            max_tokens=max_tokens,
            planned_tokens=sample.planned_tokens,
            seed=recipe.seed,
            chain=chain_key(recipe),
            extra_body=extra,
            messages=sample.messages or None,
            **asked,
        )
    except EndpointError as exc:
        if exc.key_refused:
            raise EndpointLost(f"the endpoint refused the API key: {exc.detail}") from None
        return base.model_copy(update={"error": f"the cold request failed: {exc.detail}"})
    record = record_of(sample, response, None, None, response.attempts, max_tokens, served.engine.context_length)
    if record.score is None:
        return base.model_copy(update={"cold_text": response.text, "error": record.error_detail or "not scored"})
    kl = None
    if capture is not None:
        found, _ = await capture.measure(sample, response, recipe.seed)
        kl = pair_kl(cached, record.model_copy(update={"logprobs": found}))
    return base.model_copy(
        update={
            "cold_text": response.text,
            "cold_correct": record.score.correct,
            "cold_cached_tokens": response.cached_tokens,
            "kl": kl,
        }
    )
