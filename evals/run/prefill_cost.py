"""The prefill a run computes, not only the prompt tokens it sends, request by request: what a one-slot
prefix cache per lane leaves each request to compute, in either layout, and the time that takes on a server
whose prefill time was measured at a few lengths (`fit_prefill_time`). `--dry-run` prints it (`estimate.py`).

Why per request: the time of a prefill is not proportional to its tokens (attention grows with the context
already there), so a request that reuses p tokens of an L-token prompt costs t(L) - t(p) + the fixed part, not
(L - p) / rate. And why a model of its own here: the layouts share differently.

- independent: a request reuses the previous one's tokens (same lane) up to the shallower needle of the two
  when both belong to one depth sweep (`send.order.expected_cached_tokens`'s bound, the same figures).
- nested: a chain (one task and seed) is sent on one lane in the suite's order, ascending length, the depths
  of one length back to back (`Suite.recipes`). A depth after the first of its length reuses everything but
  its question (the tail); the first of a longer length reuses the shorter one's stream (everything but its
  fill and tail). So a chain computes its longest stream once, each length's fill once and every question:
  the issue's floor, plus the fills. The question's tokens are measured by drafting the task once
  (`family.draft`, as `tasks/build.py` does; no prompt is built) and counting `draft.tail` with the run's
  counter; the fill (the units after the shared stream that bring a length to its exact size, under one
  haystack unit) is known only once the chain is laid out, so `FILL_TOKENS` stands for it: an upper bound
  (the builder fills a gap only while more than a quarter of the tolerance is left; on the nightly suite's 42
  chain lengths, counted with Gemma's tokenizer, every fill measured 0 tokens).

What two prompts share is `send.prefix_share`'s one model, the send order's bound's too; here a stream is
estimated (its length less `FILL_TOKENS` and its question). The order a cache-aware run sends nested chains in
is taken as the suite's own (chain by chain, as listed)."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ctxprobe.evals.run.send.order import Order, send_groups
from ctxprobe.evals.run.send.prefix_share import ChainParts, shared_tokens
from ctxprobe.tasks.common_params import question_position
from ctxprobe.tasks.placement import place_question
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.token_counter import TokenCounter, count

FILL_TOKENS = (
    32  # a nested length's fill after the shared stream, at most: under one haystack unit (a sentence, a line)
)


@dataclass(frozen=True)
class Request:
    """One request as the cache sees it: its prompt tokens and those a one-slot cache already holds."""

    tokens: int
    reused: int

    @property
    def computed(self) -> int:
        return self.tokens - self.reused


def lanes_of(recipes: Sequence[Recipe], order: Order, lanes: int) -> list[list[Recipe]]:
    """What each lane sends, one after another. Cache-aware: whole sharing groups (`send_groups`: independent, depth
    sweeps deepest first; nested, chains in ascending length, a length's absent questions after its present
    ones); as listed: dealt to the lanes in turn."""
    if order == "as-listed":
        return [list(recipes[k::lanes]) for k in range(lanes)]
    return send_groups([r for r in recipes if r.nested is None], order) + send_groups(
        [r for r in recipes if r.nested is not None], order
    )


def tail_counter(counter: TokenCounter) -> Callable[[Recipe], int]:
    """A recipe's question/tail tokens: its task drafted once (seed 0, the middle depth) and `draft.tail`
    counted with `counter`; every recipe of one task (family, parameters, mode) takes that figure."""
    seen: dict[tuple[str, str, str], int] = {}

    def tail(recipe: Recipe) -> int:
        key = (recipe.family, repr(sorted(recipe.params.items())), recipe.mode)
        if key not in seen:
            family = get_family(recipe.family)
            params = validate_params(family, recipe.params)
            draft = place_question(family.draft(params, 50.0, recipe.mode, random.Random(0)), question_position(params))
            seen[key] = count(counter, draft.tail)
        return seen[key]

    return tail


def estimated_chain(tail: Callable[[Recipe], int], fill: int = FILL_TOKENS) -> ChainParts:
    """A chain's parts before any prompt is built: a prompt's stream is its length less its fill and question."""
    return ChainParts(lambda recipe: recipe.context_tokens - fill - tail(recipe), fill)


def requests(
    lanes: Sequence[Sequence[Recipe]], tail: Callable[[Recipe], int], fill: int = FILL_TOKENS
) -> list[Request]:
    """Every request of the lanes with the tokens its lane's cache serves it (`prefix_share.shared_tokens`)."""
    chain = estimated_chain(tail, fill)
    out: list[Request] = []
    for lane in lanes:
        previous: Recipe | None = None
        for recipe in lane:
            out.append(Request(recipe.context_tokens, shared_tokens(previous, recipe, chain)))
            previous = recipe
    return out


PARTS = ("fixed", "linear", "square")  # a, b, c


@dataclass(frozen=True)
class PrefillFit:
    """Seconds to prefill an L-token prompt: a + b L + c L^2, every part >= 0, fitted to measured requests;
    `held` names the parts the unconstrained least squares made negative (held at 0 here)."""

    a: float
    b: float
    c: float
    lengths: tuple[int, ...] = ()
    seconds: tuple[float, ...] = ()
    held: tuple[str, ...] = ()

    def time(self, tokens: int, reused: int = 0) -> float:
        """One request's seconds: the fixed part, and the growth from `reused` cached tokens to `tokens`."""
        return self.a + self.b * (tokens - reused) + self.c * (tokens * tokens - reused * reused)

    def total(self, reqs: Sequence[Request]) -> float:
        return sum(self.time(r.tokens, r.reused) for r in reqs)

    def tokens_within(self, seconds: float) -> int:
        """The longest prompt prefilled (from nothing) within `seconds`."""
        if seconds <= self.a:
            return 0
        if self.c <= 0:
            return int((seconds - self.a) / self.b) if self.b > 0 else 2**62
        return int((-self.b + math.sqrt(self.b * self.b + 4 * self.c * (seconds - self.a))) / (2 * self.c))

    def fits_probes(self, tolerance: float = 0.15, floor_s: float = 0.02) -> bool:
        """Whether every measured time is within `tolerance` of this curve (or `floor_s`, for tiny times)."""
        return all(abs(self.time(n) - t) <= max(tolerance * t, floor_s) for n, t in zip(self.lengths, self.seconds))


def _nonnegative_fit(lengths: Sequence[int], seconds: Sequence[float], parts: Sequence[str]) -> PrefillFit:
    """Least squares of t over the named parts only (the others 0), every coefficient >= 0: the best of the
    unconstrained fits over every subset of `parts` whose coefficients all come out >= 0 (an exact non-negative
    least squares for three terms)."""
    x = np.asarray(lengths, dtype=float)
    y = np.asarray(seconds, dtype=float)
    scale = float(x.max())  # well conditioned: lengths in units of the longest
    u = x / scale
    columns = {"fixed": np.ones_like(u), "linear": u, "square": u * u}
    best: tuple[float, dict[str, float]] = (float(np.sum(y * y)), {})
    for size in range(1, len(parts) + 1):
        for subset in itertools.combinations(parts, size):
            if len(set(lengths)) < len(subset):
                continue  # more parts than lengths: not determined
            coef = np.linalg.lstsq(np.stack([columns[p] for p in subset], axis=1), y, rcond=None)[0]
            if (coef < 0).any():
                continue
            residual = float(np.sum((y - np.stack([columns[p] for p in subset], axis=1) @ coef) ** 2))
            if residual < best[0] - 1e-15:
                best = (residual, dict(zip(subset, (float(c) for c in coef))))
    got = best[1]
    return PrefillFit(
        got.get("fixed", 0.0),
        got.get("linear", 0.0) / scale,
        got.get("square", 0.0) / scale**2,
        tuple(lengths),
        tuple(seconds),
    )


def fit_prefill_time(lengths: Sequence[int], seconds: Sequence[float]) -> PrefillFit:
    """Least squares of t = a + b L + c L^2 over measured (length, seconds), with a, b, c >= 0.

    Why a quadratic: a transformer's prefill costs a fixed part (the request, one decoded token), a part per
    token (projections, MLP: linear) and attention over the context already there (quadratic); each term is
    a real cost, so the fit extrapolates with the right shape, and no part may be negative: a noisy probe must
    not predict that long prompts get cheaper (or that a request takes negative time). A power law t = k L^p has
    no fixed part (which dominates short probes and would push p below 1) and, fitted on short probes, carries
    their exponent to 1M tokens; the quadratic's c stays small where the probes saw little attention cost,
    which under- rather than over-states the longest prompts' time. The constraint is exact (the best fit over
    the subsets of parts whose unconstrained coefficients are all non-negative); the parts the unconstrained
    fit made negative are named in `held`. Two lengths fit a + b L at most; time falling with length leaves the
    mean as a."""
    if len(lengths) != len(seconds) or len(set(lengths)) < 2:
        raise ValueError("a prefill time fit needs measured times at two lengths at least")
    parts = PARTS if len(set(lengths)) >= 3 else PARTS[:2]
    fit = _nonnegative_fit(lengths, seconds, parts)
    x = np.asarray(lengths, dtype=float) / max(lengths)
    free = np.linalg.lstsq(
        np.stack([x**k for k in range(len(parts))], axis=1), np.asarray(seconds, dtype=float), rcond=None
    )[0]
    held = tuple(p for p, c in zip(parts, free) if c < 0)
    return PrefillFit(fit.a, fit.b, fit.c, fit.lengths, fit.seconds, held)


def shape_fits(lengths: Sequence[int], seconds: Sequence[float]) -> dict[str, PrefillFit]:
    """The non-negative fits of each shape the probes might follow: the full quadratic, no attention growth
    (a + b L) and all growth as attention (a + c L^2); the estimate's range is over those that fit the probes."""
    fits = {
        "fitted": fit_prefill_time(lengths, seconds),
        "no growth past the probes": _nonnegative_fit(lengths, seconds, ("fixed", "linear")),
    }
    if len(set(lengths)) >= 3:
        fits["all growth as attention"] = _nonnegative_fit(lengths, seconds, ("fixed", "square"))
    return fits
