"""`--metric correct` (the default): exact-match correctness, a pair's difference -1, 0 or +1; the rows are
the paired gate's original binary ones."""

from __future__ import annotations

from ctxprobe.evals.compare.metrics.base import PairMetric, pair_metric
from ctxprobe.evals.compare.sequential.gate import SequentialRow
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.record import SampleRecord


@pair_metric
class Correct(PairMetric):
    name = "correct"
    always = True

    def diff(self, base: SampleRecord, cand: SampleRecord, margin: float) -> float | None:
        return float(int(bool(cand.score and cand.score.correct)) - int(bool(base.score and base.score.correct)))

    def row(self, primary: bool) -> SequentialRow:
        return SequentialRow(primary=primary)

    def text(self, value: float) -> str:
        return signed(value)
