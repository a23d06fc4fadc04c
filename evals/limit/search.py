"""The search behind `ctxprobe limit`: the longest context length at which accuracy stays above a threshold.

Pure logic, no HTTP: the caller supplies `measure(length, n_more)`, which runs `n_more` more samples at
a length and returns how many were correct and how many were scored.

- A length is judged by sampling in batches until its Clopper-Pearson interval lies wholly above the threshold
  (pass) or wholly below it (fail). At the per-length cap it is decided by the point estimate and
  marked unsettled.
- The search starts at the shortest length and climbs geometrically (x `growth`) until a length fails
  or the maximum passes (`ceiling` names what the maximum is: `ctxprobe limit` searches up to the accepted
  length, never above it); where the shortest length already fails, it steps down (/ `growth`) until a
  length passes or `floor` (the tasks' own shortest prompt) fails too (absolute criterion only); then it
  bisects in log space between the longest passing and the shortest failing length until their ratio is at
  most `ratio` (or the length granularity allows no midpoint).
- A length with no scored sample (every sample errored) bounds nothing: it is neither a pass nor a fail, and
  the search goes no further on that side of it (the verdict says where it stopped and why).
- Relative criterion: the shortest length is the reference, sampled to the cap; a length passes when
  its accuracy clears `relative` x the reference accuracy.
- The equivalent full grid is the fixed grid that resolves the same `ratio` everywhere without
  adapting: min_length, min_length x ratio, min_length x ratio^2, ... (snapped to the granularity)
  up to and including max_length, every length sampled to the cap. Its request count is what the
  search is measured against."""

from __future__ import annotations

import math
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.evals.compare.stats import clopper_pearson, z_for
from ctxprobe.evals.records.limit import LengthResult, LimitResult


class Measure(Protocol):
    def __call__(self, length: int, n_more: int) -> tuple[int, int]:
        """Run `n_more` more samples at `length`; return (successes, scored trials) among them.
        Trials may fall short of `n_more` when samples error (timeouts, rejected prompts)."""
        ...


class SearchSettings(BaseModel):
    """The search's knobs a user sets, declared once: `LimitOptions` (the API, the command line and the
    manifest) is made of them, and `LimitConfig` adds the lengths."""

    threshold: float = Field(0.856, gt=0.0, le=1.0, description="absolute accuracy a length must reach (RULER's)")
    relative: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        description="instead of --min-accuracy: the fraction of "
        "the accuracy at the shortest length that a length must keep, e.g. 0.85",
    )
    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="confidence of each length's verdict")
    max_samples: int = Field(40, ge=1, description="sample cap per length; at the cap the point estimate decides")
    batch: int = Field(8, ge=1, description="samples requested at a time before the interval is checked")
    ratio: float = Field(1.25, gt=1.0, description="stop when shortest failing / longest passing <= this")


class LimitConfig(SearchSettings):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min_length: int = Field(gt=0, description="shortest context length tried, in tokens")
    max_length: int = Field(gt=0, description="longest context length tried, in tokens")
    growth: float = Field(2.0, gt=1.0, description="step of the geometric climb from the shortest length")
    granularity: int = Field(256, ge=1, description="lengths between min and max are multiples of this")
    floor: int = Field(
        256,
        ge=1,
        description="shortest length tried below min_length when min_length fails: the tasks' own shortest prompt",
    )
    ceiling: str | None = Field(
        None, description="what max_length is, where the verdict names it (`ctxprobe limit`: the accepted length)"
    )

    @model_validator(mode="after")
    def _ordered(self) -> LimitConfig:
        if self.max_length < self.min_length:
            raise ValueError(f"max_length {self.max_length} is below min_length {self.min_length}")
        return self


def snap(length: float, config: LimitConfig) -> int:
    """Round to the granularity, kept inside [min_length, max_length]."""
    g = config.granularity
    return min(config.max_length, max(config.min_length, max(g, round(length / g) * g)))


def snap_below(length: float, config: LimitConfig) -> int:
    """`snap`, but a length under min_length (the search below a failing shortest length) stays there."""
    g = config.granularity
    return snap(length, config) if length >= config.min_length else max(g, round(length / g) * g)


def full_grid(config: LimitConfig) -> list[int]:
    """The fixed grid with neighbours `ratio` apart from min_length to max_length (both included)."""
    lengths, x = [config.min_length], float(config.min_length)
    while lengths[-1] < config.max_length:
        x *= config.ratio
        nxt = snap(x, config)
        if nxt > lengths[-1]:
            lengths.append(nxt)
    return lengths


def judge_length(
    measure: Measure, length: int, threshold: float, config: LimitConfig, early_stop: bool = True
) -> LengthResult:
    """Sample `length` in batches until the Clopper-Pearson interval clears `threshold` or the cap is reached."""
    z = z_for(config.confidence)
    successes = n = requests = 0
    lo, hi = 0.0, 1.0
    while requests < config.max_samples:
        ask = min(config.batch, config.max_samples - requests)
        got, trials = measure(length, ask)
        if not 0 <= got <= trials <= ask:
            raise ValueError(f"measure({length}, {ask}) returned {got} successes of {trials} trials")
        successes, n, requests = successes + got, n + trials, requests + ask
        lo, hi = clopper_pearson(successes, n, z)
        if trials == 0:
            break  # a whole batch errored (prompts rejected, endpoint down): nothing more to learn here
        if early_stop and (lo > threshold or hi < threshold):
            return LengthResult(
                length=length,
                successes=successes,
                n=n,
                requests=requests,
                accuracy=successes / n,
                lo=lo,
                hi=hi,
                verdict="pass" if lo > threshold else "fail",
                settled=True,
            )
    if n == 0:
        return LengthResult(
            length=length,
            successes=0,
            n=0,
            requests=requests,
            accuracy=None,
            lo=lo,
            hi=hi,
            verdict="no_data",
            settled=False,
        )
    acc = successes / n
    return LengthResult(
        length=length,
        successes=successes,
        n=n,
        requests=requests,
        accuracy=acc,
        lo=lo,
        hi=hi,
        verdict="pass" if acc >= threshold else "fail",
        settled=not early_stop,
    )


def find_effective_length(measure: Measure, config: LimitConfig) -> LimitResult:
    """Climb, then bisect, to the longest length that passes. See the module docstring."""
    measured: list[LengthResult] = []
    threshold = config.threshold
    if config.relative is None:
        first = judge_length(measure, config.min_length, threshold, config)
    else:  # the reference: sampled to the cap, and passes unless it scored nothing
        reference = judge_length(measure, config.min_length, 1.0, config, early_stop=False)
        threshold = config.relative * (reference.accuracy or 0.0)
        verdict = "no_data" if reference.n == 0 else "pass" if reference.accuracy else "fail"
        first = reference.model_copy(update={"verdict": verdict})
    measured.append(first)
    passing = config.min_length if first.verdict == "pass" else None
    failing = config.min_length if first.verdict == "fail" else None  # no scored sample: it bounds nothing

    def step(length: int) -> bool:
        """Judge `length`; False when it scored nothing (it bounds nothing: the search stops that way)."""
        nonlocal passing, failing
        result = judge_length(measure, length, threshold, config)
        measured.append(result)
        if result.verdict == "pass":
            passing = length
        elif result.verdict == "fail":
            failing = length
        return result.verdict != "no_data"

    below = min(config.floor, config.min_length)
    while passing is None and config.relative is None and failing is not None and failing > below:
        if not step(max(below, snap_below(failing / config.growth, config))):
            break
    while passing is not None and failing is None and passing < config.max_length:
        if not step(max(snap(passing * config.growth, config), min(passing + config.granularity, config.max_length))):
            break
    while passing is not None and failing is not None and failing / passing > config.ratio:
        mid = snap_below(math.sqrt(passing * failing), config)
        if not passing < mid < failing or not step(mid):
            break  # the granularity leaves no length in between, or one scored nothing

    grid = full_grid(config)
    return LimitResult(
        effective=passing,
        bracket=(passing, failing) if passing and failing else None,
        first_failing=failing,
        threshold=threshold,
        criterion="absolute" if config.relative is None else "relative",
        confidence=config.confidence,
        lengths=measured,
        requests=sum(r.requests for r in measured),
        full_grid_lengths=len(grid),
        full_grid_requests=len(grid) * config.max_samples,
        verdict=_verdict(measured, passing, failing, threshold, config),
    )


def _at(measured: list[LengthResult], length: int) -> LengthResult:
    return next(r for r in reversed(measured) if r.length == length)


def _confidence(measured: list[LengthResult], length: int, threshold: float, config: LimitConfig) -> str:
    """The confidence the verdict at `length` has: the configured one where its interval cleared the bar (the
    length was settled); where the sample cap decided on the point estimate, that, with the interval that
    still holds the bar (no confidence at all is claimed then); the relative criterion's reference passes by
    definition."""
    conf = f"{config.confidence:.0%}"
    r = _at(measured, length)
    if r.settled:
        return conf
    if config.relative is not None and length == config.min_length:
        return "the reference length: it passes by definition"
    acc = "no scored samples" if r.accuracy is None else f"accuracy {r.accuracy:.2f} over {r.n}"
    where = (
        f"at the {config.max_samples}-sample cap"
        if r.requests >= config.max_samples
        else f"after {r.requests} requests, when a whole batch errored"
    )
    holds = f" still holds {threshold:.3g}" if r.lo <= threshold <= r.hi else ""
    return f"a point estimate {where}, not {conf}: {acc}, its {conf} interval [{r.lo:.2f}, {r.hi:.2f}]{holds}"


def _verdict(
    measured: list[LengthResult], passing: int | None, failing: int | None, threshold: float, config: LimitConfig
) -> str:
    if config.relative is None:
        bar = f"{threshold:.3g}"
    else:
        bar = f"{threshold:.3g} ({config.relative:.0%} of {measured[0].accuracy or 0:.2f} at {config.min_length:,})"
    scored = [r for r in measured if r.verdict != "no_data"]
    if passing is None and not scored:
        text = "not measured"
    elif passing is None:
        first = measured[0]
        acc = "no scored samples" if first.accuracy is None else f"accuracy {first.accuracy:.2f}"
        text = f"fails at the shortest length {config.min_length:,}: {acc}, below {bar}"
        shortest = min(r.length for r in scored)
        if len(scored) > 1:
            text += f"; and below it, down to {shortest:,}"
        if config.relative is None and shortest <= config.floor:
            text = f"effective: below {shortest:,} tokens, the shortest this task can be; " + text
    elif failing is None:
        said = _confidence(measured, passing, threshold, config)
        if passing >= config.max_length and config.ceiling:
            text = f"effective ≥ {passing:,}, capped by {config.ceiling} ({said}): stays above {bar} up to it"
        else:
            text = f"effective ≥ {passing:,} ({said}): stays above {bar} up to the longest length tried"
    else:
        said = _confidence(measured, passing, threshold, config)
        text = f"effective ≥ {passing:,} ({said}); drops below {bar} between {passing:,} and {failing:,}"
        if not _at(measured, failing).settled:
            text += f" (below at {failing:,}: {_confidence(measured, failing, threshold, config)})"
        if passing < config.min_length:
            text += f" (below the shortest length asked, {config.min_length:,}, which failed)"
    unsettled = [r.length for r in measured if not r.settled and r.verdict != "no_data"]
    if unsettled:
        text += f"; decided on the point estimate at the {config.max_samples}-sample cap: " + ", ".join(
            f"{x:,}" for x in unsettled
        )
    no_data = [r.length for r in measured if r.verdict == "no_data"]
    if no_data:
        text += "; no scored samples at " + ", ".join(f"{x:,}" for x in no_data)
    return text
