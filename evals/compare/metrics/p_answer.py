"""`--metric p_answer`: the difference of the answer's probability (`evals.compare.paired.p_answer`), in
[-1, 1], judged against `--fail-if-drop` in probability points."""

from __future__ import annotations

from collections.abc import Sequence

from ctxprobe.evals.compare.metrics.base import PairMetric, pair_metric
from ctxprobe.evals.compare.paired.p_answer import p_answer, p_answer_diff
from ctxprobe.evals.records.record import SampleRecord


@pair_metric
class PAnswer(PairMetric):
    name = "p_answer"
    unit_note = "p_answer's points are probability points"

    def available(self, records: Sequence[SampleRecord]) -> bool:
        return any(p_answer(r) is not None for r in records)

    def missing(self, baseline: str) -> str:
        return (
            f"--metric p_answer: the baseline {baseline} has no answer probabilities (run it with --logprobs, on "
            "an engine that gives them)"
        )

    def diff(self, base: SampleRecord, cand: SampleRecord, margin: float) -> float | None:
        return p_answer_diff(base, cand)
