"""`ctxprobe.estimate(...)` and `ctxprobe run --dry-run`: what a run will cost before it runs — samples and
prompt tokens by length, how many of those a prefix cache can serve in the chosen order, the prefill time
at a given (or measured) rate, and, from the model's config, the KV/state memory per sequence and whether
the chosen concurrency fits."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from ctxprobe.evals.run.send.options import EndpointOptions, RunOptions, validated
from ctxprobe.evals.run.send.order import Order, expected_cached_tokens, send_groups
from ctxprobe.runners.response import in_flight
from ctxprobe.tasks.sample import Recipe, TokenizerIdentity
from ctxprobe.tasks.suite import Suite

PROBE_TOKENS = 2048  # the one short request that measures the prefill rate when none is given


class LengthCost(BaseModel):
    context_tokens: int
    samples: int
    prompt_tokens: int
    bytes_per_sequence: int | None = None
    sequences_that_fit: int | None = None


class Estimate(BaseModel):
    suite: str
    order: str
    concurrency: int
    samples: int
    prompt_tokens: int
    longest_prompt: int
    lengths: list[LengthCost]
    cached_tokens: int  # a prefix cache with one slot per lane, in the chosen order
    cached_tokens_as_listed: int
    prefill_tokens_per_s: float | None = None
    prefill_rate_source: str | None = None
    prefill_s: float | None = None  # uncached prompt tokens at that rate, in the chosen order
    prefill_s_as_listed: float | None = None
    stop: str = "fixed"
    fixed_grid_prompt_tokens: int | None = None  # --stop decided: the suite's own grid, beside the cap's
    min_prompt_tokens: int | None = None  # --stop decided: every cell stopped at --min-samples
    paired_gate_tokens: dict[str, int] | None = None  # per gated metric: a paired run against this grid, no drop
    warnings: list[str] = []


def estimate(options: RunOptions | None = None, **kwargs: object) -> Estimate:
    """The cost of the run `options` describe, planned as the run plans it (`evals.run.plan.resolve`: the same
    suite, stopping rule, mode, order and requests in flight); sends at most one short probe request (to
    measure the prefill rate when `prefill_rate` is not given)."""
    opts = options if options is not None else validated(RunOptions, dict(kwargs))
    from ctxprobe.evals.run.plan import resolve
    from ctxprobe.evals.run.rounds import capped_suite, fixed_grid_tokens
    from ctxprobe.evals.run.send.serving import default_mode, known_slots

    plan = resolve(opts)
    suite, rule = plan.suite, plan.rule
    recipes = capped_suite(suite, rule).recipes(lambda mode: TokenizerIdentity("estimate"), mode=plan.mode,
                                                default_mode=default_mode(plan.endpoint))
    if opts.config:  # a bad config is one line before the probe that measures the prefill rate is sent
        from ctxprobe.evals.plan.config import load_config

        load_config(Path(opts.config))
    probe = None if opts.prefill_rate else _probe(plan.endpoint, suite)
    # the run's own: the probe's served endpoint, else what is known before one answers
    concurrency = probe.concurrency if probe else in_flight(plan.endpoint.concurrency, known_slots(plan.endpoint))
    by_length = Counter(r.context_tokens for r in recipes)
    lengths = [LengthCost(context_tokens=n, samples=k, prompt_tokens=n * k) for n, k in sorted(by_length.items())]
    total, cached = _cached(recipes, plan.order, concurrency)
    _, cached_listed = _cached(recipes, "as-listed", concurrency)
    est = Estimate(suite=suite.name, order=plan.order, concurrency=concurrency, samples=len(recipes),
                   prompt_tokens=total, longest_prompt=max(by_length), lengths=lengths, cached_tokens=cached,
                   cached_tokens_as_listed=cached_listed, stop=rule.stop)
    if rule.stop == "decided":
        est.fixed_grid_prompt_tokens = fixed_grid_tokens(suite)
        est.min_prompt_tokens = sum(r.context_tokens for r in recipes if r.seed - suite.seed < rule.min_samples)
    if suite.paired_gate_share:
        est.paired_gate_tokens = {m: round(share * total) for m, share in suite.paired_gate_share.items()}
    rate, source = (probe.rate, probe.source) if probe else (opts.prefill_rate, "given")
    if rate:
        est.prefill_tokens_per_s, est.prefill_rate_source = rate, source
        est.prefill_s = (total - cached) / rate
        est.prefill_s_as_listed = (total - cached_listed) / rate
    if opts.config:
        _memory(est, opts)
    return est


def _cached(recipes: list[Recipe], order: Order, lanes: int) -> tuple[int, int]:
    """A one-slot prefix cache per lane. Cache-aware: each sharing group runs whole on one lane (or fanned out
    from its deepest sample: the same bound, `order.expected_cached_tokens`). As listed:
    samples are dealt to the lanes in turn, so neighbours in the list land on different lanes."""
    if order == "cache-aware":
        return expected_cached_tokens(send_groups(recipes, order))
    return expected_cached_tokens([recipes[k::lanes] for k in range(lanes)])


def _memory(est: Estimate, opts: RunOptions) -> None:
    from ctxprobe.evals.plan.api import plan

    contexts = ",".join(str(c.context_tokens) for c in est.lengths)
    report = plan(opts.config or "", contexts=contexts, gpus=opts.gpus, gpu_mem=opts.gpu_mem, weights=opts.weights,
                  util=opts.util)
    per_seq = {c.tokens: c.bytes for c in report.total.per_sequence}
    fits = {f.tokens: f.sequences for f in report.total.fits or []}
    for row in est.lengths:
        row.bytes_per_sequence = per_seq.get(row.context_tokens)
        row.sequences_that_fit = fits.get(row.context_tokens)
        if row.sequences_that_fit is not None and row.sequences_that_fit < est.concurrency:
            est.warnings.append(f"concurrency {est.concurrency} does not fit at {row.context_tokens:,} tokens: "
                                f"the caches hold {row.sequences_that_fit} sequences of that length")


@dataclass(frozen=True)
class _Probe:
    """One short request to the served endpoint: its prefill rate, and the requests in flight the run would
    keep there."""

    rate: float
    source: str
    concurrency: int


def _probe(endpoint: EndpointOptions, suite: Suite) -> _Probe:
    """Prompt tokens per second of one short request to the endpoint (or the engine ctxprobe starts)."""
    from ctxprobe.evals.run.send.serving import serving
    from ctxprobe.runners.endpoint import EndpointClient
    from ctxprobe.tasks.build import builder_for

    probe_suite = suite.model_copy(update={"lengths": [PROBE_TOKENS],
                                           "tasks": [t.model_copy(update={"lengths": None}) for t in suite.tasks]})
    with serving(endpoint, probe_suite) as served:
        builder = builder_for(served.counter)
        recipe = builder.recipe(family="niah", haystack="noise", context_tokens=PROBE_TOKENS, depth=50.0, seed=0,
                                mode=served.mode)
        sample = builder.build(recipe)

        async def send() -> tuple[int, float]:
            async with EndpointClient(served.config) as client:
                started = time.monotonic()
                response = await client.send(sample.prompt, max_tokens=1, planned_tokens=sample.planned_tokens,
                                             seed=0)
                return response.prompt_tokens or sample.planned_tokens, time.monotonic() - started

        tokens, seconds = asyncio.run(send())
    return _Probe(tokens / seconds, f"measured: one {tokens:,}-token request in {seconds:.2f} s",
                  served.config.concurrency)


def render_estimate(est: Estimate) -> str:
    """The dry run's printout."""
    def gb(b: int | None) -> str:
        return "-" if b is None else f"{b / 1e9:,.2f} GB"

    out = [f"suite {est.suite}: {est.samples:,} samples, {est.prompt_tokens:,} prompt tokens, longest prompt "
           f"{est.longest_prompt:,} tokens; order {est.order}, concurrency {est.concurrency}",
           f"{'length':>10} {'samples':>8} {'prompt tokens':>15} {'KV+state/seq':>13} {'fit':>6}"]
    for row in est.lengths:
        fit = "-" if row.sequences_that_fit is None else str(row.sequences_that_fit)
        out.append(f"{row.context_tokens:>10,} {row.samples:>8,} {row.prompt_tokens:>15,} "
                   f"{gb(row.bytes_per_sequence):>13} {fit:>6}")
    share = est.cached_tokens / est.prompt_tokens if est.prompt_tokens else 0.0
    listed = est.cached_tokens_as_listed / est.prompt_tokens if est.prompt_tokens else 0.0
    out.append(f"prefix cache (one slot per lane): {est.cached_tokens:,} tokens ({share:.1%}) in {est.order} order; "
               f"{est.cached_tokens_as_listed:,} ({listed:.1%}) as listed")
    if est.prefill_s is not None and est.prefill_tokens_per_s:
        out.append(f"prefill at {est.prefill_tokens_per_s:,.0f} tok/s ({est.prefill_rate_source}): "
                   f"{_hours(est.prefill_s)} in {est.order} order, {_hours(est.prefill_s_as_listed or 0.0)} as listed "
                   f"(one stream; divide by the replicas' parallel throughput)")
    if est.stop == "decided":
        out.append(f"--stop decided: at most {est.prompt_tokens:,} prompt tokens (every cell to its cap), at least "
                   f"{est.min_prompt_tokens or 0:,} (every cell decided at --min-samples); the suite's fixed grid: "
                   f"{est.fixed_grid_prompt_tokens or 0:,}")
    if est.paired_gate_tokens:
        shown = ", ".join(f"{tokens:,} gated on {metric}" for metric, tokens in est.paired_gate_tokens.items())
        out.append(f"a paired run against a baseline of this grid (run --against, --fail-if-drop 0.05) is expected to "
                   f"send, when nothing dropped: {shown} prompt tokens (benchmarks/bench_sequential.py's model)")
    out += [f"warning: {w}" for w in est.warnings]
    return "\n".join(out)


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if seconds >= 3600 else f"{seconds:,.0f} s"
