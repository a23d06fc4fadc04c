"""KL at depth: for two runs of the same model and prompts (builds, engines, KV cache types), how far the
candidate's distribution at each answer position is from the baseline's, by length x depth: the
long-context version of llama.cpp's KLD comparison of quants (`llama-perplexity --kl-divergence`,
tools/perplexity/perplexity.cpp: "Mean KLD" and "Same top p", each with its uncertainty).

The positions are the gold answer's tokens, teacher-forced after the same prompt on both sides
(`runners.response.AnswerLogprobs`), so position j of one run and of the other condition on the same
text. Definitions, matched to llama.cpp's where the data allow:
- KL is KL(base || cand) = sum_t p_base(t) log(p_base(t) / p_cand(t)), in nats, as llama.cpp sums it; from
  top-k lists it is the least value both lists allow (`evals.paired.topk_kl`), exact with the full vocabulary.
- top-1 agreement ("Same top p") at a position: the candidate's likeliest token is the baseline's.
- Averaging differs on purpose: llama.cpp pools every token of one long text; here each sample's positions
  are averaged first, then samples (the independent units: a prompt's positions share its context), and the
  interval is over samples (`evals.paired.mean_interval`): 95 %, where llama.cpp prints one standard error.
Tokens are matched by id where both runs give ids at a position, else by their text. A pair is left out,
and counted by reason, when either record has no logprobs or "unavailable", the prompts differ (paired by
task fields only), the gold tokens differ, or no position has top-k lists on both sides (a list holding a
log-probability that is NaN or above 0 is no list)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

from ctxprobe.evals.compare.clusters import chain_means, cluster_of
from ctxprobe.evals.compare.paired import kl_gate
from ctxprobe.evals.compare.paired.mean_interval import MEAN_METHOD, SHARE_METHOD, mean_interval, share_interval
from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.compare.paired.rows import grouped
from ctxprobe.evals.compare.paired.topk_kl import Side, topk_kl
from ctxprobe.evals.records.kl import CandidateKL, KLComparison, KLLevel, KLRow
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.runners.response import AnswerLogprobs, TokenLogprob

KL_METHOD = (
    "KL(base || cand) in nats at each gold answer position, the least both top-k lists allow "
    "(the baseline's listed tokens plus a rest bucket; exact with the full vocabulary); top-1: the "
    "likeliest tokens agree; mean over a sample's positions, then over samples"
)
LEVELS: tuple[KLLevel, ...] = ("family", "family_length", "cell")


@dataclass(frozen=True)
class SampleKL:
    """One pair's numbers: its mean KL and top-1 agreement over the positions both runs list."""

    kl: float
    top1: float
    base_rest: float
    positions: int
    top_k: int


def _key(entry: TokenLogprob, by_id: bool) -> Hashable:
    return entry.id if by_id else entry.token


def _side(lp: AnswerLogprobs, j: int, by_id: bool) -> Side:
    """Position j of one run: its top-k, and the gold token (known by id) where it is not among them."""
    top = lp.top[j]
    known: dict[Hashable, float] = {}
    for entry in top:
        key = _key(entry, by_id)
        known[key] = known.get(key, 0.0) + math.exp(entry.logprob)
    if by_id and len(lp.token_ids) == len(lp.logprobs):
        known.setdefault(lp.token_ids[j], math.exp(lp.logprobs[j]))
    return Side(known=known, kth=min(math.exp(e.logprob) for e in top))


def _likeliest(top: list[TokenLogprob], by_id: bool) -> Hashable:
    return _key(max(top, key=lambda e: e.logprob), by_id)


def comparable(pair: Pair) -> tuple[AnswerLogprobs, AnswerLogprobs] | str:
    """Both records' logprobs where the pair can be compared position by position, else why not."""
    base, cand = pair.base.logprobs, pair.cand.logprobs
    for side, lp in (("baseline", base), ("candidate", cand)):
        if lp is None:
            return f"{side} without logprobs"
        if not isinstance(lp, AnswerLogprobs):
            return f"{side} logprobs unavailable"
    assert isinstance(base, AnswerLogprobs) and isinstance(cand, AnswerLogprobs)
    if not pair.same_prompt:
        return "prompts differ"
    if len(base.logprobs) != len(cand.logprobs) or (
        base.token_ids and cand.token_ids and base.token_ids != cand.token_ids
    ):
        return "gold tokens differ"
    if not _positions(base, cand):
        return "no top-k alternatives"
    return base, cand


def _listed(top: list[TokenLogprob]) -> bool:
    """A top-k list to compare: not empty, every log-probability a number at most 0 (NaN is not)."""
    return bool(top) and all(e.logprob <= 1e-9 for e in top)


def _positions(base: AnswerLogprobs, cand: AnswerLogprobs) -> list[int]:
    """The gold positions where both runs give a top-k list to compare."""
    return [
        j
        for j in range(min(len(base.top), len(cand.top), len(base.logprobs)))
        if _listed(base.top[j]) and _listed(cand.top[j])
    ]


def sample_kl(base: AnswerLogprobs, cand: AnswerLogprobs) -> SampleKL:
    """Mean KL and top-1 agreement over the positions where both runs give a top-k list."""
    kls, same, rests, ks = [], [], [], []
    for j in _positions(base, cand):
        by_id = all(e.id is not None for e in (*base.top[j], *cand.top[j]))
        b, c = _side(base, j, by_id), _side(cand, j, by_id)
        kls.append(topk_kl(b, c))
        same.append(_likeliest(base.top[j], by_id) == _likeliest(cand.top[j], by_id))
        rests.append(max(0.0, 1.0 - math.fsum(b.known.values())))
        ks.append(min(len(base.top[j]), len(cand.top[j])))
    return SampleKL(
        kl=math.fsum(kls) / len(kls),
        top1=sum(same) / len(same),
        base_rest=math.fsum(rests) / len(rests),
        positions=len(kls),
        top_k=min(ks),
    )


def pair_kl(base: SampleRecord, cand: SampleRecord, same_prompt: bool = True) -> float | None:
    """The pair's KL in nats (its mean over the answer positions both sides list), or None where it has
    none (an error or no logprobs on a side, logprobs unavailable, other prompts or gold tokens, no top-k
    lists)."""
    if base.error is not None or cand.error is not None:
        return None
    found = comparable(Pair(base=base, cand=cand, same_prompt=same_prompt))
    return None if isinstance(found, str) else sample_kl(*found).kl


GATE_LEVELS: tuple[KLLevel, ...] = ("family", "family_length")  # the rows a KL gate judges (pooled: primary)


def candidate_kl(candidate: str, pairs: list[Pair], gate: tuple[float, float] | None = None) -> CandidateKL:
    """The KL rows of one candidate: per family, family x length and cell, from the pairs that can be
    compared; the others counted by reason. `gate` (margin in nats, alpha): the pooled and family x length
    rows judged by the KL gate (`evals.paired.kl_gate`)."""
    reasons: Counter[str] = Counter()
    usable: list[Pair] = []
    values: dict[int, SampleKL] = {}
    for pair in pairs:
        found = comparable(pair)
        if isinstance(found, str):
            reasons[found] += 1
        else:
            usable.append(pair)
            values[id(pair)] = sample_kl(*found)
    rows = []
    kls: list[list[float]] = []  # each row's pairs' KL, what the gate bets on
    chains: list[list[str]] = []  # each row's pairs' chains (`evals.compare.clusters`)
    for level in LEVELS:
        for (family, variant, haystack, length, depth), group in grouped(usable, level).items():
            got = [values[id(p)] for p in group]
            kls.append([s.kl for s in got])
            chains.append([cluster_of(p.base) for p in group])
            # a nested run's chains are the units: each chain's mean is one observation (a pair is its own
            # chain in the independent layout, so nothing changes there); one chain: no interval
            kl, kl_lo, kl_hi = mean_interval(chain_means([s.kl for s in got], chains[-1]))
            top1, top1_lo, top1_hi = share_interval(chain_means([s.top1 for s in got], chains[-1]))
            rows.append(
                KLRow(
                    candidate=candidate,
                    level=level,
                    family=family,
                    variant=variant,
                    haystack=haystack,
                    context_tokens=length,
                    depth=depth,
                    n=len(got),
                    positions=sum(s.positions for s in got),
                    kl=kl,
                    kl_lo=max(0.0, kl_lo) if not math.isnan(kl_lo) else kl_lo,
                    kl_hi=kl_hi,
                    top1=top1,
                    top1_lo=top1_lo,
                    top1_hi=top1_hi,
                    base_rest=math.fsum(s.base_rest for s in got) / len(got),
                    top_k=min(s.top_k for s in got),
                )
            )
    if gate is not None:
        rows = _judged(rows, kls, chains, *gate)
    return CandidateKL(candidate=candidate, pairs=len(usable), left_out=dict(sorted(reasons.items())), rows=rows)


def _judged(
    rows: list[KLRow], kls: list[list[float]], chains: list[list[str]], margin: float, alpha: float
) -> list[KLRow]:
    """The rows with the KL gate's verdicts on the pooled and family x length ones (one Holm over them);
    `kls[i]`: row i's pairs' KL."""
    at = [i for i, r in enumerate(rows) if r.level in GATE_LEVELS]
    judged = kl_gate.judge_rows(
        [(rows[i].level == "family", kls[i]) for i in at], margin, alpha, [chains[i] for i in at]
    )
    out = list(rows)
    for i, v in zip(at, judged):
        out[i] = rows[i].model_copy(
            update={"verdict": v.verdict, "gate_lo": v.lo, "gate_hi": v.hi, "p_fail": v.p_fail, "p_pass": v.p_pass}
        )
    return out


def kl_comparison(candidates: list[tuple[str, list[Pair]]], gate: tuple[float, float] | None = None) -> KLComparison:
    """KL at depth for each (candidate label, its pairs with the baseline); `gate` (margin in nats, alpha):
    with the KL gate's verdicts."""
    return KLComparison(
        method=KL_METHOD,
        interval_method=f"KL: {MEAN_METHOD}; top-1: {SHARE_METHOD}",
        candidates=[candidate_kl(label, pairs, gate) for label, pairs in candidates],
        margin=None if gate is None else gate[0],
        gate_method=None if gate is None else kl_gate.KL_GATE_METHOD,
    )
