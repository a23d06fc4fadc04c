"""Whether a run's prefix-cache path changes answers: the cache-path control's decision over its checks
(`evals.records.cache_check`: each a request the run served from the cache, sent again with a cold prefill).

A healthy engine's numerics differ a little between a cached and a cold prefill (other kernels, other batch
shapes), and a close greedy answer can flip either way (docs/ENGINES.md). So no single difference decides;
each is counted, and the engine is at fault only when both hold:
- a one-sided paired sign test: among the checks where exactly one side is right, the cold side is right
  more often than the cached one, at `ALPHA` (a healthy engine flips both ways alike; a corrupting cache only
  one way). With b checks right only cold and c right only cached, p = P(X >= b), X ~ Binomial(b + c, 1/2).
- where the checks have answer log-probabilities (`--logprobs`), the mean KL(cached || cold) over the gold
  answer's positions is above `KL_NOISE_FLOOR`, the noise between the two paths measured on healthy engines
  (docs/ENGINES.md, "Cache path"). Without log-probabilities the sign test decides alone.
Checks that differ without reaching the test are `differs`: said, counted, and no fault."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

from ctxprobe.evals.records.cache_check import CacheCheck, CacheCheckRecord, LengthChecks, cold_id

ALPHA = 0.05
# nats: above the KL of one answer position read through two cache paths in other batch shapes on a healthy
# engine (up to 0.031, docs/ENGINES.md, "Cache path")
KL_NOISE_FLOOR = 0.05


def sign_test_p(cold_only: int, cached_only: int) -> float:
    """One-sided exact sign test: P(X >= cold_only) for X ~ Binomial(cold_only + cached_only, 1/2)
    (1.0 where no check is right on one side only)."""
    n = cold_only + cached_only
    if n == 0:
        return 1.0
    return math.fsum(math.comb(n, k) for k in range(cold_only, n + 1)) / 2.0**n


def decide(
    checks: Iterable[CacheCheckRecord],
    *,
    chosen: Iterable[str],
    engine: str,
    how: str,
    asked: str,
    kl_floor: float = KL_NOISE_FLOOR,
    alpha: float = ALPHA,
) -> CacheCheck:
    """The manifest's `CacheCheck` from the checks made (`chosen`: the sample ids chosen for a check)."""
    chosen = list(chosen)
    made = [c for c in checks if c.sample_id in set(chosen)]
    compared = [c for c in made if c.compared]
    cold_only = sum(1 for c in compared if c.cold_correct and not c.cached_correct)
    cached_only = sum(1 for c in compared if c.cached_correct and not c.cold_correct)
    differed = sum(1 for c in compared if c.differed)
    lengths: dict[int, LengthChecks] = {}
    for c in compared:
        row = lengths.setdefault(c.context_tokens, LengthChecks(context_tokens=c.context_tokens))
        row.checked += 1
        row.differed += int(c.differed)
    kls = [c.kl for c in compared if c.kl is not None]
    p = sign_test_p(cold_only, cached_only) if compared else None
    kl_mean = math.fsum(kls) / len(kls) if kls else None
    if not compared:
        verdict = "unchecked"
    elif p is not None and p < alpha and (kl_mean is None or kl_mean > kl_floor):
        verdict = "fault"
    elif differed:
        verdict = "differs"
    else:
        verdict = "agrees"
    return CacheCheck(
        verdict=verdict,
        engine=engine,
        how=how,
        asked=asked,
        chosen=len(chosen),
        checked=len(compared),
        differed=differed,
        cold_right_cached_wrong=cold_only,
        cached_right_cold_wrong=cached_only,
        unchecked=len(chosen) - len(compared),
        per_length=[lengths[k] for k in sorted(lengths)],
        cold_ids=[cold_id(c.sample_id) for c in made],
        p_value=p,
        kl_median=statistics.median(kls) if kls else None,
        kl_max=max(kls) if kls else None,
        kl_mean=kl_mean,
        kl_noise_floor=kl_floor if kls else None,
        prefill_tokens=sum(c.context_tokens for c in made),
    )
