"""`ctxprobe.estimate(...)` and `ctxprobe run --dry-run`: what a run will cost before it runs — samples and
prompt tokens by length, the prefill a prefix cache leaves to compute in the chosen layout and order (and in
the other layout, for comparison: `prefill_cost.py`), the prefill time at a given rate or, with a server to
probe, through its prefill time measured at three lengths and fitted (`prefill_cost.fit_prefill_time`), a
paired run's expected share of all that per gated metric, and, from the model's config, the KV/state memory
per sequence and whether the chosen concurrency fits. Nothing is built but the probes' prompts: a nested
chain's questions are counted by drafting each task once."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from ctxprobe.evals.run.prefill_cost import PrefillFit, Request, fit_prefill_time, lanes_of, requests, tail_counter
from ctxprobe.evals.run.send.options import EndpointOptions, RunOptions, validated
from ctxprobe.evals.run.send.order import Order
from ctxprobe.runners.endpoint_config import PREFILL_SHARE
from ctxprobe.runners.response import in_flight
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe, TokenizerIdentity
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import EstimateCounter, TokenCounter, make_token_counter

PROBE_MAX_TOKENS = 4096  # the longest probe: 1K, 2K and 4K take seconds on a CPU engine (8K took 107 s on 2 busy cores)
PROBE_MIN_TOKENS = 256
WARM_UP_TOKENS = 256  # a first request, not timed into the fit: the connection and the engine's first allocations


class LengthCost(BaseModel):
    context_tokens: int
    samples: int
    prompt_tokens: int
    bytes_per_sequence: int | None = None
    sequences_that_fit: int | None = None


class PairedCost(BaseModel):
    """A paired run against a baseline of this grid, when nothing dropped, on one gated metric: its share of
    the grid (benchmarks/bench_sequential.py), the prompt tokens it sends, and the prefill it computes in the
    run's layout and the other, taken as that share of each layout's (the gate's rounds close lengths alike
    in both; a nested chain whose longest length stays open prefills it whole, so the nested figure is a
    floor)."""

    metric: str
    share: float
    prompt_tokens: int
    computed_prefill: int
    other_computed_prefill: int | None = None
    fit_s: float | None = None
    other_fit_s: float | None = None


class FitShown(BaseModel):
    """t = a + b L + c L^2 seconds, from the probes (lengths, seconds)."""

    a: float
    b: float
    c: float
    lengths: list[int]
    seconds: list[float]

    def fitted(self) -> PrefillFit:
        return PrefillFit(self.a, self.b, self.c, tuple(self.lengths), tuple(self.seconds))


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
    layout: str = "independent"  # the suite's (nested when any task is)
    computed_prefill: int = 0  # prompt tokens the engine computes: sent less what the prefix cache serves
    other_layout: str | None = None  # the same cells in the other layout, where its tasks allow it
    other_computed_prefill: int | None = None
    paired: list[PairedCost] = []  # per gated metric: tokens sent and computed in each layout, and the time
    fit: FitShown | None = None  # the server's prefill time measured at a few lengths and fitted
    fit_s: float | None = None  # the run's computed prefill through the fit, request by request (one stream)
    other_fit_s: float | None = None
    warnings: list[str] = []


def estimate(options: RunOptions | None = None, **kwargs: object) -> Estimate:
    """The cost of the run `options` describe, planned as the run plans it (`evals.run.plan.resolve`: the same
    suite, layout, stopping rule, mode, order and requests in flight); sends at most three short probe
    requests (to measure the server's prefill time when `prefill_rate` is not given)."""
    opts = options if options is not None else validated(RunOptions, dict(kwargs))
    from ctxprobe.evals.run.plan import resolve
    from ctxprobe.evals.run.rounds import capped_suite, fixed_grid_tokens
    from ctxprobe.evals.run.send.serving import default_mode, known_slots

    plan = resolve(opts)
    suite, rule = plan.suite, plan.rule
    capped = capped_suite(suite, rule)

    def recipes_of(of: Suite) -> list[Recipe]:
        return of.recipes(lambda mode: TokenizerIdentity("estimate"), mode=plan.mode,
                          default_mode=default_mode(plan.endpoint))

    recipes = recipes_of(capped)
    layout = "nested" if any(r.nested is not None for r in recipes) else "independent"
    other_layout = "independent" if layout == "nested" else "nested"
    try:  # the same cells in the other layout, for comparison; a task the nested layout refuses: none
        other = recipes_of(capped.model_copy(update={
            "layout": other_layout, "tasks": [t.model_copy(update={"layout": None}) for t in capped.tasks]}))
    except UserError:
        other = None
    if opts.config:  # a bad config is one line before the probe that measures the prefill rate is sent
        from ctxprobe.evals.plan.config import load_config

        load_config(Path(opts.config))
    by_length = Counter(r.context_tokens for r in recipes)
    probe = None if opts.prefill_rate else _probe(plan.endpoint, suite, max(by_length))
    # the run's own: the probe's served endpoint, else what is known before one answers
    concurrency = probe.concurrency if probe else in_flight(plan.endpoint.concurrency, known_slots(plan.endpoint))
    tail = tail_counter(probe.counter if probe else _offline_counter(opts.token_counter))
    lengths = [LengthCost(context_tokens=n, samples=k, prompt_tokens=n * k) for n, k in sorted(by_length.items())]
    reqs = requests(lanes_of(recipes, plan.order, concurrency), tail)
    total = sum(r.tokens for r in reqs)
    computed = sum(r.computed for r in reqs)
    listed = sum(r.computed for r in requests(lanes_of(recipes, "as-listed", concurrency), tail))
    other_reqs = requests(lanes_of(other, plan.order, concurrency), tail) if other is not None else None
    est = Estimate(suite=suite.name, order=plan.order, concurrency=concurrency, samples=len(recipes),
                   prompt_tokens=total, longest_prompt=max(by_length), lengths=lengths, cached_tokens=total - computed,
                   cached_tokens_as_listed=total - listed, stop=rule.stop, layout=layout, computed_prefill=computed,
                   other_layout=other_layout if other_reqs is not None else None,
                   other_computed_prefill=sum(r.computed for r in other_reqs) if other_reqs is not None else None)
    if rule.stop == "decided":
        est.fixed_grid_prompt_tokens = fixed_grid_tokens(suite)
        est.min_prompt_tokens = sum(r.context_tokens for r in recipes if r.seed - suite.seed < rule.min_samples)
    if suite.paired_gate_share:
        est.paired_gate_tokens = {m: round(share * total) for m, share in suite.paired_gate_share.items()}
    rate, source = (probe.rate, probe.source) if probe else (opts.prefill_rate, "given")
    if rate:
        est.prefill_tokens_per_s, est.prefill_rate_source = rate, source
        est.prefill_s = computed / rate
        est.prefill_s_as_listed = listed / rate
    if probe is not None:
        fit = probe.fit
        est.fit = FitShown(a=fit.a, b=fit.b, c=fit.c, lengths=list(fit.lengths), seconds=list(fit.seconds))
        est.fit_s = fit.total(reqs)
        est.other_fit_s = fit.total(other_reqs) if other_reqs is not None else None
        warning = deadline_warning(fit, est.longest_prompt, probe.deadline_s, probe.timeout_s, probe.per_1k)
        if warning:
            est.warnings.append(warning)
    for metric, share in (suite.paired_gate_share or {}).items():
        est.paired.append(PairedCost(
            metric=metric, share=share, prompt_tokens=round(share * total), computed_prefill=round(share * computed),
            other_computed_prefill=None if est.other_computed_prefill is None else round(share * est.other_computed_prefill),
            fit_s=None if est.fit_s is None else share * est.fit_s,
            other_fit_s=None if est.other_fit_s is None else share * est.other_fit_s))
    if opts.config:
        _memory(est, opts)
    return est


def deadline_warning(fit: PrefillFit, longest: int, deadline_s: float, timeout_s: float, per_1k: float) -> str | None:
    """One line when the deadline a request of `longest` tokens gets (`--timeout` + `--timeout-per-1k` x its
    thousands) is shorter than its prefill at the measured time, proposing the `--timeout-per-1k` that covers
    it at a quarter of the measured speed (`PREFILL_SHARE`, the margin the run gives a measured rate)."""
    need = fit.time(longest)
    if need <= deadline_s:
        return None
    proposed = math.ceil(need / PREFILL_SHARE / (longest / 1000.0) * 100) / 100
    return (f"a {longest:,}-token prompt takes about {need:,.0f} s to prefill at the measured time, past its "
            f"{deadline_s:,.0f} s deadline (--timeout {timeout_s:g}, --timeout-per-1k {per_1k:g}): give "
            f"--timeout-per-1k {proposed:g}")


def _offline_counter(spec: str | None) -> TokenCounter:
    """The counter a dry run with no server counts questions with: the one given, where it needs no server,
    else 4 characters a token."""
    if spec and not spec.startswith("server"):
        return make_token_counter(spec)
    return EstimateCounter()


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
    """Short requests to the served endpoint: its prefill rate (the longest probe's) and time fit, the
    requests in flight the run would keep there, its token counter, and the deadline of the longest prompt."""

    rate: float
    source: str
    concurrency: int
    fit: PrefillFit
    counter: TokenCounter
    deadline_s: float
    timeout_s: float
    per_1k: float


def probe_lengths(reach: int) -> list[int]:
    """1/8, 1/4 and 1/2 of `reach` (the longest prompt the server takes and the suite sends), the longest
    at most `PROBE_MAX_TOKENS` (the three then in the same ratios below it) and each at least `PROBE_MIN_TOKENS`."""
    top = max(min(reach // 2, PROBE_MAX_TOKENS), PROBE_MIN_TOKENS * 4)
    return [top // 4, top // 2, top]


def _probe(endpoint: EndpointOptions, suite: Suite, longest: int) -> _Probe:
    """The endpoint's (or the engine ctxprobe starts) prefill time at three lengths, one request each (each
    its own seed: no probe reuses another's prefix), after a tiny warm-up request that is not timed (the first
    request to a server pays for its connection and first allocations: 0.16 s against 0.02 s on the fake
    engine), fitted to t = a + b L + c L^2."""
    from ctxprobe.evals.run.send.serving import serving
    from ctxprobe.runners.endpoint import EndpointClient
    from ctxprobe.tasks.build import builder_for

    wanted = probe_lengths(longest)
    probe_suite = suite.model_copy(update={"lengths": [wanted[-1]], "layout": "independent",
                                           "tasks": [t.model_copy(update={"lengths": None, "layout": None})
                                                     for t in suite.tasks]})
    with serving(endpoint, probe_suite) as served:
        accepts = served.engine.context_length
        lengths = wanted if not accepts or accepts > wanted[-1] else probe_lengths(accepts)
        builder = builder_for(served.counter)
        samples = [builder.build(builder.recipe(family="niah", haystack="noise", context_tokens=n, depth=50.0,
                                                seed=k, mode=served.mode)) for k, n in enumerate([WARM_UP_TOKENS, *lengths])]

        async def send() -> list[tuple[int, float]]:
            out = []
            async with EndpointClient(served.config) as client:
                for k, sample in enumerate(samples):
                    started = time.monotonic()
                    response = await client.send(sample.prompt, max_tokens=1, planned_tokens=sample.planned_tokens,
                                                 seed=k)
                    out.append((response.prompt_tokens or sample.planned_tokens, time.monotonic() - started))
            return out

        measured = asyncio.run(send())[1:]  # the warm-up is not timed into the fit
        config = served.config
    tokens, seconds = measured[-1]
    fit = fit_prefill_time([n for n, _ in measured], [t for _, t in measured])
    shown = ", ".join(f"{n:,} in {t:.2f} s" for n, t in measured)
    return _Probe(tokens / seconds, f"measured: {shown}", config.concurrency, fit, served.counter,
                  config.request_timeout_s(longest), config.timeout, config.timeout_per_1k)


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
    out.append(f"computed prefill, layout {est.layout}: {est.computed_prefill:,} tokens "
               f"({_share(est.computed_prefill, est.prompt_tokens)} of the prompt tokens sent)"
               + ("" if est.other_computed_prefill is None else
                  f"; layout {est.other_layout}: {est.other_computed_prefill:,} "
                  f"({_share(est.other_computed_prefill, est.prompt_tokens)})"))
    if est.prefill_s is not None and est.prefill_tokens_per_s:
        out.append(f"prefill at {est.prefill_tokens_per_s:,.0f} tok/s ({est.prefill_rate_source}): "
                   f"{_hours(est.prefill_s)} in {est.order} order, {_hours(est.prefill_s_as_listed or 0.0)} as listed "
                   f"(one stream; divide by the replicas' parallel throughput)")
    if est.fit is not None and est.fit_s is not None:
        f = est.fit
        out.append(f"prefill time fitted to the probes: t = {f.a:.3g} + {f.b:.3g} L + {f.c:.3g} L^2 s; the suite's "
                   f"computed prefill through it, request by request: {_hours(est.fit_s)} in layout {est.layout}"
                   + ("" if est.other_fit_s is None else f", {_hours(est.other_fit_s)} in layout {est.other_layout}")
                   + " (one stream; probes far shorter than the suite's prompts make this a floor)")
    if est.stop == "decided":
        out.append(f"--stop decided: at most {est.prompt_tokens:,} prompt tokens (every cell to its cap), at least "
                   f"{est.min_prompt_tokens or 0:,} (every cell decided at --min-samples); the suite's fixed grid: "
                   f"{est.fixed_grid_prompt_tokens or 0:,}")
    if est.paired_gate_tokens:
        shown = ", ".join(f"{tokens:,} gated on {metric}" for metric, tokens in est.paired_gate_tokens.items())
        out.append(f"a paired run against a baseline of this grid (run --against, --fail-if-drop 0.05) is expected to "
                   f"send, when nothing dropped: {shown} prompt tokens (benchmarks/bench_sequential.py's model)")
        for row in est.paired:
            line = (f"  {row.metric}: {row.share:.0%} of the grid, {row.prompt_tokens:,} prompt tokens; computed "
                    f"prefill {row.computed_prefill:,} (layout {est.layout})")
            if row.other_computed_prefill is not None:
                line += f", {row.other_computed_prefill:,} (layout {est.other_layout})"
            if row.fit_s is not None:
                line += f"; {_hours(row.fit_s)}" + ("" if row.other_fit_s is None else f", {_hours(row.other_fit_s)}")
            out.append(line)
    out += [f"warning: {w}" for w in est.warnings]
    return "\n".join(out)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2%}" if whole else "-"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if seconds >= 3600 else f"{seconds:,.0f} s"
