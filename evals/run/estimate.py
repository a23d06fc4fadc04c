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

from ctxprobe.evals.run.cache_check import asked, check_tokens, choose
from ctxprobe.evals.run.prefill_cost import (
    PrefillFit,
    Request,
    fit_prefill_time,
    lanes_of,
    requests,
    shape_fits,
    tail_counter,
)
from ctxprobe.evals.run.send.options import DryRunOptions, EndpointOptions, RunOptions, validated
from ctxprobe.evals.run.served_lengths import LengthCheck, check_lengths, engine_line
from ctxprobe.runners.endpoint_config import PREFILL_SHARE
from ctxprobe.runners.response import in_flight
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.lengths import parse_length
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
    served: bool = True  # False: longer than the engine serves, not costed (the run records it rejected_too_long)
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
    fit_range_s: tuple[float, float] | None = None
    other_fit_range_s: tuple[float, float] | None = None


class FitShown(BaseModel):
    """t = a + b L + c L^2 seconds, from the probes (lengths, seconds)."""

    a: float
    b: float
    c: float
    lengths: list[int]
    seconds: list[float]
    held: list[str] = []  # parts the unconstrained fit made negative, held at 0

    def fitted(self) -> PrefillFit:
        return PrefillFit(self.a, self.b, self.c, tuple(self.lengths), tuple(self.seconds), tuple(self.held))


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
    fit_range_s: tuple[float, float] | None = None  # over the shapes that fit the probes (`shape_fits`)
    other_fit_range_s: tuple[float, float] | None = None
    extrapolation: float | None = None  # the longest prompt costed over the longest probe
    engine: str | None = None  # the engine and model probed (`served_lengths.engine_line`)
    served_context: int | None = None  # tokens a request may hold there
    unserved: list[int] = []  # suite lengths the engine cannot serve: not costed
    unserved_line: str | None = None
    cache_check: str = "off"  # the cache-path control asked for (--cache-check, the suite's, or the layout's default)
    cache_check_stated: str = ""  # where it was stated, in words ("" for the layout's default)
    cache_check_requests: int = 0  # its cold re-sends (evals/run/cache_check.py)
    cache_check_tokens: int = 0  # the prefill they compute: each its whole prompt
    cache_check_s: float | None = None  # that prefill's time (through the fit where there is one, else the rate)
    warnings: list[str] = []


def estimate(options: RunOptions | None = None, **kwargs: object) -> Estimate:
    """The cost of the run `options` describe, planned as the run plans it (`evals.run.plan.resolve`: the same
    suite, layout, stopping rule, mode, order and requests in flight); sends at most three short probe
    requests (to measure the server's prefill time when `prefill_rate` is not given)."""
    from ctxprobe.evals.run.plan import resolve
    from ctxprobe.evals.run.rounds import capped_suite, fixed_grid_tokens
    from ctxprobe.evals.run.send.serving import default_mode, known_slots

    plan = resolve(options if options is not None else validated(RunOptions, dict(kwargs)))
    suite, rule = plan.suite, plan.rule
    capped = capped_suite(suite, rule)

    def recipes_of(of: Suite) -> list[Recipe]:
        return of.recipes(
            lambda mode: TokenizerIdentity("estimate"), mode=plan.mode, default_mode=default_mode(plan.endpoint)
        )

    recipes = recipes_of(capped)
    layout = "nested" if any(r.nested is not None for r in recipes) else "independent"
    other_layout = "independent" if layout == "nested" else "nested"
    try:  # the same cells in the other layout, for comparison; a task the nested layout refuses: none
        other = recipes_of(
            capped.model_copy(
                update={"layout": other_layout, "tasks": [t.model_copy(update={"layout": None}) for t in capped.tasks]}
            )
        )
    except UserError:
        other = None
    cost = plan.cost
    if cost.config:  # a bad config is one line before the probe that measures the prefill rate is sent
        from ctxprobe.evals.plan.config import load_config

        load_config(Path(cost.config))
    by_length = Counter(r.context_tokens for r in recipes)
    room = plan.budgets.answer_tokens or 1
    probe_up_to = parse_length(cost.probe_up_to) if cost.probe_up_to else None
    probe = None if cost.prefill_rate else _probe(plan.endpoint, suite, by_length, room, probe_up_to)
    # the run's own: the probe's served endpoint, else what is known before one answers
    concurrency = probe.concurrency if probe else in_flight(plan.endpoint.concurrency, known_slots(plan.endpoint))
    tail = tail_counter(probe.counter if probe else _offline_counter(plan.endpoint.token_counter))
    unserved = set(probe.check.unserved) if probe else set()
    lengths = [
        LengthCost(context_tokens=n, samples=k, prompt_tokens=n * k, served=n not in unserved)
        for n, k in sorted(by_length.items())
    ]
    recipes = [r for r in recipes if r.context_tokens not in unserved]  # what can be served is what is costed
    other = None if other is None else [r for r in other if r.context_tokens not in unserved]
    reqs = requests(lanes_of(recipes, plan.order, concurrency), tail)
    total = sum(r.tokens for r in reqs)
    computed = sum(r.computed for r in reqs)
    listed = sum(r.computed for r in requests(lanes_of(recipes, "as-listed", concurrency), tail))
    other_reqs = requests(lanes_of(other, plan.order, concurrency), tail) if other is not None else None
    est = Estimate(
        suite=suite.name,
        order=plan.order,
        concurrency=concurrency,
        samples=len(recipes),
        prompt_tokens=total,
        longest_prompt=max((r.context_tokens for r in recipes), default=0),
        lengths=lengths,
        cached_tokens=total - computed,
        cached_tokens_as_listed=total - listed,
        stop=rule.stop,
        layout=layout,
        computed_prefill=computed,
        other_layout=other_layout if other_reqs is not None else None,
        other_computed_prefill=sum(r.computed for r in other_reqs) if other_reqs is not None else None,
    )
    if probe is not None:
        est.engine, est.served_context = probe.engine_line, probe.check.context
        est.unserved = sorted(unserved)
        est.unserved_line = probe.check.line() if unserved else None
    est.cache_check, est.cache_check_stated = asked(plan.cache_check, recipes), plan.cache_check_stated
    checks = choose(recipes, est.cache_check, seed=suite.seed, computed_prefill=computed)
    est.cache_check_requests, est.cache_check_tokens = len(checks), check_tokens(checks)
    if rule.stop == "decided":
        est.fixed_grid_prompt_tokens = fixed_grid_tokens(suite)
        est.min_prompt_tokens = sum(r.context_tokens for r in recipes if r.seed - suite.seed < rule.min_samples)
    if suite.paired_gate_share:
        est.paired_gate_tokens = {m: round(share * total) for m, share in suite.paired_gate_share.items()}
    if cost.prefill_rate:  # the flat rate given: the override, and the only figure then
        est.prefill_tokens_per_s, est.prefill_rate_source = cost.prefill_rate, "given"
        est.prefill_s = computed / cost.prefill_rate
        est.prefill_s_as_listed = listed / cost.prefill_rate
        est.cache_check_s = est.cache_check_tokens / cost.prefill_rate
    if probe is not None and probe.fit is not None:
        _fitted_time(est, probe, reqs, other_reqs, checks)
    for metric, share in (suite.paired_gate_share or {}).items():
        est.paired.append(_paired_cost(est, metric, share, total, computed))
    if cost.config:
        _memory(est, cost)
    return est


def _fitted_time(
    est: Estimate, probe: _Probe, reqs: list[Request], other_reqs: list[Request] | None, checks: list[Recipe]
) -> None:
    """The prefill time of `reqs` (and of the other layout's) through the probe's fit, the range the other
    shapes that fit the probes give, how far past its longest probe it reaches, and a deadline warning."""
    fit = probe.fit
    assert fit is not None
    est.prefill_tokens_per_s, est.prefill_rate_source = probe.rate, probe.source
    est.fit = FitShown(
        a=fit.a, b=fit.b, c=fit.c, lengths=list(fit.lengths), seconds=list(fit.seconds), held=list(fit.held)
    )
    shapes = [f for f in shape_fits(fit.lengths, fit.seconds).values() if f.fits_probes()] or [fit]
    est.fit_s = fit.total(reqs)
    est.cache_check_s = fit.total([Request(r.context_tokens, 0) for r in checks])
    est.fit_range_s = _span([f.total(reqs) for f in shapes] + [est.fit_s])
    if other_reqs is not None:
        est.other_fit_s = fit.total(other_reqs)
        est.other_fit_range_s = _span([f.total(other_reqs) for f in shapes] + [est.other_fit_s])
    est.extrapolation = est.longest_prompt / max(fit.lengths) if est.longest_prompt else None
    warning = (
        deadline_warning(fit, est.longest_prompt, probe.deadline_s, probe.timeout_s, probe.per_1k)
        if est.longest_prompt
        else None
    )
    if warning:
        est.warnings.append(warning)


def _paired_cost(est: Estimate, metric: str, share: float, total: int, computed: int) -> PairedCost:
    """The share of the run's cost a paired gate on `metric` sends (its share of the samples)."""
    return PairedCost(
        metric=metric,
        share=share,
        prompt_tokens=round(share * total),
        computed_prefill=round(share * computed),
        other_computed_prefill=None
        if est.other_computed_prefill is None
        else round(share * est.other_computed_prefill),
        fit_s=None if est.fit_s is None else share * est.fit_s,
        other_fit_s=None if est.other_fit_s is None else share * est.other_fit_s,
        fit_range_s=_scaled(est.fit_range_s, share),
        other_fit_range_s=_scaled(est.other_fit_range_s, share),
    )


def _span(values: list[float]) -> tuple[float, float]:
    return min(values), max(values)


def _scaled(span: tuple[float, float] | None, share: float) -> tuple[float, float] | None:
    return None if span is None else (share * span[0], share * span[1])


def deadline_warning(fit: PrefillFit, longest: int, deadline_s: float, timeout_s: float, per_1k: float) -> str | None:
    """One line when the deadline a request of `longest` tokens gets (`--timeout` + `--timeout-per-1k` x its
    thousands) is shorter than its prefill at the measured time, proposing the `--timeout-per-1k` that covers
    it at a quarter of the measured speed (`PREFILL_SHARE`, the margin the run gives a measured rate)."""
    need = fit.time(longest)
    if need <= deadline_s:
        return None
    proposed = math.ceil(need / PREFILL_SHARE / (longest / 1000.0) * 100) / 100
    return (
        f"a {longest:,}-token prompt takes about {need:,.0f} s to prefill at the measured time, past its "
        f"{deadline_s:,.0f} s deadline (--timeout {timeout_s:g}, --timeout-per-1k {per_1k:g}): give "
        f"--timeout-per-1k {proposed:g}"
    )


def _offline_counter(spec: str | None) -> TokenCounter:
    """The counter a dry run with no server counts questions with: the one given, where it needs no server,
    else 4 characters a token."""
    if spec and not spec.startswith("server"):
        return make_token_counter(spec)
    return EstimateCounter()


def _memory(est: Estimate, cost: DryRunOptions) -> None:
    from ctxprobe.evals.plan.api import plan

    contexts = ",".join(str(c.context_tokens) for c in est.lengths)
    report = plan(
        cost.config or "", contexts=contexts, gpus=cost.gpus, gpu_mem=cost.gpu_mem, weights=cost.weights, util=cost.util
    )
    per_seq = {c.tokens: c.bytes for c in report.total.per_sequence}
    fits = {f.tokens: f.sequences for f in report.total.fits or []}
    for row in est.lengths:
        row.bytes_per_sequence = per_seq.get(row.context_tokens)
        row.sequences_that_fit = fits.get(row.context_tokens)
        if row.sequences_that_fit is not None and row.sequences_that_fit < est.concurrency:
            est.warnings.append(
                f"concurrency {est.concurrency} does not fit at {row.context_tokens:,} tokens: "
                f"the caches hold {row.sequences_that_fit} sequences of that length"
            )


@dataclass(frozen=True)
class _Probe:
    """The served endpoint, before any cost: which of the suite's lengths it serves (`check`), its prefill time
    measured at a few lengths and fitted (None when it serves none of them), the longest probe's rate, the
    requests in flight the run would keep there, its token counter, and the deadline of the longest prompt."""

    engine_line: str
    check: LengthCheck
    fit: PrefillFit | None
    rate: float | None
    source: str
    concurrency: int
    counter: TokenCounter
    deadline_s: float
    timeout_s: float
    per_1k: float


def probe_lengths(reach: int, up_to: int | None = None) -> list[int]:
    """1/4, 1/2 and all of the longest probe: half of `reach` (the longest prompt the server takes and the suite
    sends), at most `PROBE_MAX_TOKENS` unless `up_to` (`--probe-up-to`) allows longer, and at least
    `PROBE_MIN_TOKENS` x 4; `up_to` never carries it past `reach`."""
    longest = min(reach, up_to) if up_to else min(reach // 2, PROBE_MAX_TOKENS)
    top = max(longest, PROBE_MIN_TOKENS * 4)
    return [top // 4, top // 2, top]


def _probe(endpoint: EndpointOptions, suite: Suite, by_length: Counter[int], room: int, up_to: int | None) -> _Probe:
    """Serve the endpoint as the run would (an engine ctxprobe starts is sized to the suite, so its context is
    the run's), check the suite's lengths against what it serves, then time the prefill at three lengths below
    the longest it serves, one request each (each its own seed: no probe reuses another's prefix), after a tiny
    warm-up request that is not timed (the first request to a server pays for its connection and first
    allocations: 0.16 s against 0.02 s on the fake engine), fitted to t = a + b L + c L^2 (`fit_prefill_time`)."""
    from ctxprobe.evals.run.send.serving import serving
    from ctxprobe.runners.endpoint import EndpointClient
    from ctxprobe.tasks.build import builder_for

    with serving(endpoint, suite) as served:
        config = served.config
        check = check_lengths(by_length, served.engine, room)
        line = engine_line(served.engine, config.base_urls[0])
        servable = [n for n in by_length if n not in check.unserved]
        longest = max(servable, default=0)
        deadline = config.request_timeout_s(longest)
        if not servable:
            return _Probe(
                line,
                check,
                None,
                None,
                "nothing to probe",
                config.concurrency,
                served.counter,
                deadline,
                config.timeout,
                config.timeout_per_1k,
            )
        reach = min(longest, check.context - room - 1) if check.context else longest
        lengths = probe_lengths(reach, up_to)
        builder = builder_for(served.counter)
        samples = [
            builder.build(
                builder.recipe(family="niah", haystack="noise", context_tokens=n, depth=50.0, seed=k, mode=served.mode)
            )
            for k, n in enumerate([WARM_UP_TOKENS, *lengths])
        ]

        async def send() -> list[tuple[int, float]]:
            out = []
            async with EndpointClient(served.config) as client:
                for k, sample in enumerate(samples):
                    started = time.monotonic()
                    response = await client.send(
                        sample.prompt, max_tokens=1, planned_tokens=sample.planned_tokens, seed=k
                    )
                    out.append((response.prompt_tokens or sample.planned_tokens, time.monotonic() - started))
            return out

        measured = asyncio.run(send())[1:]  # the warm-up is not timed into the fit
    tokens, seconds = measured[-1]
    fit = fit_prefill_time([n for n, _ in measured], [t for _, t in measured])
    shown = ", ".join(f"{n:,} in {t:.2f} s" for n, t in measured)
    return _Probe(
        line,
        check,
        fit,
        tokens / seconds,
        f"measured: {shown}",
        config.concurrency,
        served.counter,
        deadline,
        config.timeout,
        config.timeout_per_1k,
    )


def render_estimate(est: Estimate) -> str:
    """The dry run's printout."""

    def gb(b: int | None) -> str:
        return "-" if b is None else f"{b / 1e9:,.2f} GB"

    out = [est.engine] if est.engine else []
    if est.unserved_line:
        out.append(f"lengths: {est.unserved_line}; the costs below count only what it serves")
    out += [
        f"suite {est.suite}: {est.samples:,} samples, {est.prompt_tokens:,} prompt tokens, longest prompt "
        f"{est.longest_prompt:,} tokens; order {est.order}, concurrency {est.concurrency}"
        + (" (the lengths it serves)" if est.unserved else ""),
        f"{'length':>10} {'samples':>8} {'prompt tokens':>15} {'KV+state/seq':>13} {'fit':>6}",
    ]
    for row in est.lengths:
        fit = "-" if row.sequences_that_fit is None else str(row.sequences_that_fit)
        out.append(
            f"{row.context_tokens:>10,} {row.samples:>8,} {row.prompt_tokens:>15,} "
            f"{gb(row.bytes_per_sequence):>13} {fit:>6}" + ("" if row.served else "  not served: not costed")
        )
    share = est.cached_tokens / est.prompt_tokens if est.prompt_tokens else 0.0
    listed = est.cached_tokens_as_listed / est.prompt_tokens if est.prompt_tokens else 0.0
    out.append(
        f"prefix cache (one slot per lane): {est.cached_tokens:,} tokens ({share:.1%}) in {est.order} order; "
        f"{est.cached_tokens_as_listed:,} ({listed:.1%}) as listed"
    )
    out.append(
        f"computed prefill, layout {est.layout}: {est.computed_prefill:,} tokens "
        f"({_share(est.computed_prefill, est.prompt_tokens)} of the prompt tokens sent)"
        + (
            ""
            if est.other_computed_prefill is None
            else f"; layout {est.other_layout}: {est.other_computed_prefill:,} "
            f"({_share(est.other_computed_prefill, est.prompt_tokens)})"
        )
    )
    if est.prefill_s is not None and est.prefill_rate_source == "given":
        out.append(
            f"prefill at {est.prefill_tokens_per_s:,.0f} tok/s (--prefill-rate): "
            f"{_hours(est.prefill_s)} in {est.order} order, {_hours(est.prefill_s_as_listed or 0.0)} as listed "
            f"(one stream; divide by the replicas' parallel throughput)"
        )
    if est.fit is not None and est.fit_s is not None:
        out += _fit_lines(est)
    elif not est.samples:
        out.append("nothing to cost: the engine serves none of the suite's lengths")
    if est.cache_check == "off" and est.cache_check_stated:
        out.append(f"cache-path control: off ({est.cache_check_stated}): no cold re-sends")
    elif est.cache_check != "off":
        time = "" if est.cache_check_s is None else f", {_hours(est.cache_check_s)}"
        stated = est.cache_check_stated or f"--cache-check {est.cache_check}"
        out.append(
            f"cache-path control ({stated}): {est.cache_check_requests} cold re-sends, "
            f"{est.cache_check_tokens:,} tokens prefilled ({_share(est.cache_check_tokens, est.computed_prefill)} "
            f"of the computed prefill{time}; at least one per length)"
        )
    if est.stop == "decided":
        out.append(
            f"--stop decided: at most {est.prompt_tokens:,} prompt tokens (every cell to its cap), at least "
            f"{est.min_prompt_tokens or 0:,} (every cell decided at --min-samples); the suite's fixed grid: "
            f"{est.fixed_grid_prompt_tokens or 0:,}"
        )
    if est.paired_gate_tokens and est.samples:
        shown = ", ".join(f"{tokens:,} gated on {metric}" for metric, tokens in est.paired_gate_tokens.items())
        out.append(
            f"a paired run against a baseline of this grid (run --against, --fail-if-drop 0.05) is expected to "
            f"send, when nothing dropped: {shown} prompt tokens (benchmarks/bench_sequential.py's model)"
        )
        for paired in est.paired:
            line = (
                f"  {paired.metric}: {paired.share:.0%} of the grid, {paired.prompt_tokens:,} prompt tokens; computed "
                f"prefill {paired.computed_prefill:,} (layout {est.layout})"
            )
            if paired.other_computed_prefill is not None:
                line += f", {paired.other_computed_prefill:,} (layout {est.other_layout})"
            if paired.fit_s is not None:
                line += f"; {_cost(paired.fit_s, paired.fit_range_s)} (layout {est.layout})" + (
                    ""
                    if paired.other_fit_s is None
                    else f", {_cost(paired.other_fit_s, paired.other_fit_range_s)} (layout {est.other_layout})"
                )
            out.append(line)
    out += [f"warning: {w}" for w in est.warnings]
    return "\n".join(out)


EXTRAPOLATED = 4.0  # past this many times the longest probe, the cost is labelled carried past its data


def _fit_lines(est: Estimate) -> list[str]:
    """The probes, the fit (labelled where a part was held at 0 or it is carried far past its data) and one
    expected prefill time per layout with the range the probes support."""
    f = est.fit
    assert f is not None and est.fit_s is not None
    probes = ", ".join(f"{n:,} in {t:.2f} s" for n, t in zip(f.lengths, f.seconds))
    held = (
        f"; the unconstrained fit's {' and '.join(f.held)} part came out negative (noise), held at 0" if f.held else ""
    )
    out = [f"prefill probes: {probes}; fitted t = {f.a:.3g} + {f.b:.3g} L + {f.c:.3g} L^2 s, every part >= 0{held}"]
    line = f"expected prefill time (one stream): {_cost(est.fit_s, est.fit_range_s)} in layout {est.layout}"
    if est.other_fit_s is not None:
        line += f"; {_cost(est.other_fit_s, est.other_fit_range_s)} in layout {est.other_layout}"
    out.append(line)
    x = est.extrapolation or 0.0
    longest = max(f.lengths)
    if x > 1.05:
        how = (
            f"carried {x:,.1f}x past its data: a floor where attention grows faster than the probes show"
            if x > EXTRAPOLATED
            else f"{x:,.1f}x past it"
        )
        served = f" (the engine serves {est.served_context:,})" if est.served_context else ""
        out.append(
            f"  the longest prompt costed is {est.longest_prompt:,} tokens, the longest probe {longest:,}: "
            f"{how}; --probe-up-to {est.longest_prompt} probes up to it{served}, a few prefills of that length"
        )
    else:
        out.append(f"  the probes reach the longest prompt costed ({est.longest_prompt:,} tokens): no extrapolation")
    return out


def _cost(seconds: float, span: tuple[float, float] | None) -> str:
    """A time and its range (the shapes the probes support), where the range is not one value."""
    if span is None or _hours(span[0]) == _hours(span[1]):
        return _hours(seconds)
    return f"{_hours(seconds)} (range {_hours(span[0])} to {_hours(span[1])})"


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2%}" if whole else "-"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if seconds >= 3600 else f"{seconds:,.0f} s"
