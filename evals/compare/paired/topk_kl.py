"""KL(base || cand) at one answer position from what engines return: each side's top-k tokens with their
probabilities (and the gold token's, which is always known), never the whole vocabulary.

llama.cpp's `llama-perplexity --kl-divergence` (tools/perplexity/perplexity.cpp, `kl_divergence` and its
`log_softmax`) sums p_base(t) * (log p_base(t) - log p_cand(t)) over the full vocabulary at each token. With
top-k lists that sum cannot be formed: a token in the baseline's list may be missing from the candidate's,
and the mass outside both lists is spread over tokens nobody named. The estimator here is the least KL
consistent with what both lists say:

1. Coarse-grain the vocabulary into the baseline's known tokens B (one bucket each) and one "rest" bucket
   (every other token). By the data-processing inequality, the KL of the coarse-grained distributions is at
   most the true KL, whatever the true distributions are.
2. On that partition the baseline side is known: p(t) for t in B and its rest mass r_b = 1 - sum(p). The
   candidate side is known for t in B that the candidate also lists; for a t in B that it does not list,
   q(t) is unknown but bounded: 0 <= q(t) <= u = min(the candidate's k-th probability, its rest mass r_c)
   (an unlisted token is no likelier than the least likely listed one), and the unlisted ones together hold
   at most r_c.
3. Take the minimum of the coarse KL over every q in those bounds. It is convex in the unknowns; its KKT
   conditions give q(t) = min(u, s * p(t)) for one scalar s (the unknown tokens share the candidate's free
   mass in proportion to the baseline's probabilities, capped at u), found by bisection.

So the estimate is a lower bound on the true KL: a divergence it reports is there, and with the full
vocabulary on both sides (k = vocabulary) it is the exact KL. What it cannot see is divergence among the
tokens of the rest bucket, which hold the baseline's rest mass (reported beside it, `base_rest`), and what
the bound on an unlisted token leaves open (it takes the least KL within it): on distributions shaped
like a language model's it recovers about 60 % of the exact KL at k = 5 and 80 % at k = 20, alike for light
and heavy noise, so builds keep their order (`benchmarks/bench_topk_kl.py`). A probability the bound
forces to 0 (the candidate's listed tokens hold all its mass yet miss one of the baseline's) is floored at
`PROB_FLOOR`, so one position cannot make a cell's mean infinite."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

PROB_FLOOR = 1e-10  # the least probability a bound may give a token the baseline names (log 1e-10 = -23)
_HALVINGS = 200


@dataclass(frozen=True)
class Side:
    """One run's view of one position: the probability of each token it names (its top-k, and the gold
    token where known) and `kth`, the smallest probability in its top-k (an unnamed token's bound)."""

    known: Mapping[Hashable, float]
    kth: float

    def normalised(self) -> tuple[dict[Hashable, float], float, float]:
        """(known probabilities, rest mass, bound for an unnamed token); a list summing past 1 (rounding)
        is scaled to 1, leaving no rest."""
        total = math.fsum(self.known.values())
        scale = 1.0 / total if total > 1.0 else 1.0
        known = {t: p * scale for t, p in self.known.items()}
        rest = max(0.0, 1.0 - math.fsum(known.values()))
        return known, rest, min(self.kth * scale, rest)


def _xlogy(p: float, q: float) -> float:
    return p * math.log(p / max(q, PROB_FLOOR)) if p > 0.0 else 0.0


def _filled(p_missing: list[float], u: float, s: float) -> float:
    return math.fsum(min(u, p * s) for p in p_missing)


def _solve(lo: float, hi: float, above: float, of: Callable[[float], float]) -> float:
    """The s in [lo, hi] where the increasing function `of` crosses `above`, by bisection."""
    for _ in range(_HALVINGS):
        mid = (lo + hi) / 2.0
        if of(mid) < above:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def missing_fill(p_missing: list[float], base_rest: float, free: float, u: float, cand_rest: float) -> list[float]:
    """The candidate probabilities of the baseline's tokens the candidate does not list that minimise the
    coarse KL: q = min(u, s * p) with s from the KKT conditions. `free` is the candidate mass outside the
    tokens both list (its rest plus what it lists outside B); at most `cand_rest` of it may go to them."""
    if not p_missing:
        return []
    if u <= 0.0:
        return [0.0] * len(p_missing)
    top = u / min(p for p in p_missing if p > 0.0) if any(p > 0.0 for p in p_missing) else 0.0
    if base_rest > 0.0:  # stationarity: q / p = (free - sum q) / base_rest for the uncapped ones
        s = _solve(0.0, free / base_rest, 0.0, lambda s: _filled(p_missing, u, s) + s * base_rest - free)
    else:  # no baseline rest: each q as large as its bounds allow
        s = top
    if _filled(p_missing, u, s) > cand_rest:  # the unlisted tokens hold at most the candidate's rest mass
        s = _solve(0.0, top, cand_rest, lambda s: _filled(p_missing, u, s))
    return [min(u, p * s) for p in p_missing]


def topk_kl(base: Side, cand: Side) -> float:
    """The least KL(base || cand) consistent with both sides' lists (module docstring); exact when both
    name every token of the vocabulary."""
    p, base_rest, _ = base.normalised()
    q, cand_rest, u = cand.normalised()
    shared = [t for t in p if t in q]
    missing = [t for t in p if t not in q]
    free = cand_rest + math.fsum(q[t] for t in q if t not in p)
    fill = missing_fill([p[t] for t in missing], base_rest, free, u, cand_rest)
    terms = [_xlogy(p[t], q[t]) for t in shared] + [_xlogy(p[t], x) for t, x in zip(missing, fill)]
    if base_rest > 0.0:
        terms.append(_xlogy(base_rest, free - math.fsum(fill)))
    return math.fsum(terms)
