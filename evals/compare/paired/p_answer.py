"""A pair's second metric: the difference of the answer's probability (`p_answer`: the chance the model
would write exactly the expected answer when sampling at temperature 1, from the gold tokens'
teacher-forced logprobs, `runners.response.AnswerLogprobs`). A pair has one only when both records carry
AnswerLogprobs; a record with `logprobs: unavailable` or none asked for gives no value, never a zero, and
rows say how many of their pairs had one. The statistics are the paired gate's betting ones for values in
[-1, 1] (`evals.sequential.betting`): anytime-valid, so they hold for a fixed run and an adaptive one alike.
Pairs of one chain of a nested run are averaged first (`evals.compare.clusters`): the chains' means are the
observations (in the independent layout each pair is its own chain, so nothing changes)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ctxprobe.evals.compare.clusters import chain_means, cluster_of
from ctxprobe.evals.compare.confseq import p_from_log_e
from ctxprobe.evals.compare.paired.kl_gate import GateMetric
from ctxprobe.evals.compare.sequential.betting import Evidence, PairedValues, betting_cs, log_e_above, log_e_below
from ctxprobe.evals.records.compare import AnswerProbabilityRow
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.runners.response import AnswerLogprobs

Metric = GateMetric  # what a paired gate judges (kl: `evals.paired.kl_gate`)
METRICS: tuple[Metric, ...] = ("correct", "p_answer", "kl")
P_ANSWER_METHOD = (
    "p_answer: the mean paired difference of the answer's probability, anytime-valid betting "
    "confidence sequence and p-value (values in [-1, 1])"
)


def p_answer(record: SampleRecord) -> float | None:
    """The record's answer probability, or None where it has no AnswerLogprobs (or is not scored)."""
    if record.error is not None or record.score is None or not isinstance(record.logprobs, AnswerLogprobs):
        return None
    return record.logprobs.p_answer


def p_answer_diff(base: SampleRecord, cand: SampleRecord) -> float | None:
    """Candidate minus baseline answer probability, where both have one."""
    b, c = p_answer(base), p_answer(cand)
    return None if b is None or c is None else c - b


def two_sided_anytime_p(evidence: Evidence) -> float:
    """Two-sided anytime-valid p-value of "no difference": the betting e-value against "no drop" or against
    "no gain", doubled for the two sides."""
    return min(1.0, 2.0 * p_from_log_e(max(0.0, log_e_below(0.0, evidence), log_e_above(0.0, evidence))))


def answer_probability_row(
    base: Sequence[SampleRecord], cand: Sequence[SampleRecord], alpha: float = 0.05
) -> AnswerProbabilityRow | None:
    """The p_answer statistics of a row's pairs (base[i] paired with cand[i]); None when no pair has one."""
    kept = [(p_answer(b), p_answer(c), cluster_of(b)) for b, c in zip(base, cand, strict=True)]
    having = [(b, c, k) for b, c, k in kept if b is not None and c is not None]
    both = [(b, c) for b, c, _ in having]
    if not both:
        return None
    evidence = PairedValues(tuple(chain_means([c - b for b, c in both], [k for _, _, k in having])))
    lo, hi = betting_cs(evidence)
    gate_lo, gate_hi = betting_cs(evidence, min(2.0 * alpha, 0.99))
    return AnswerProbabilityRow(
        n=len(both),
        missing=len(kept) - len(both),
        base=math.fsum(b for b, _ in both) / len(both),
        cand=math.fsum(c for _, c in both) / len(both),
        diff=evidence.mean,
        lo=lo,
        hi=hi,
        gate_lo=gate_lo,
        gate_hi=gate_hi,
        p_value=two_sided_anytime_p(evidence),
    )


def row_values(base: Sequence[SampleRecord], cand: Sequence[SampleRecord]) -> PairedValues:
    """The p_answer differences of a row's pairs that have one (what the gate bets on)."""
    diffs = [(p_answer_diff(b, c), cluster_of(b)) for b, c in zip(base, cand, strict=True)]
    return PairedValues(
        tuple(chain_means([d for d, _ in diffs if d is not None], [k for d, k in diffs if d is not None]))
    )
