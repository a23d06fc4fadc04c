"""`--metric kl`: the KL of the candidate's answer distributions from the baseline's, judged against
`--kl-margin` nats; each pair's KL is capped and scaled to a loss in [-1, 0] (`evals.compare.paired.kl_gate`
says why and what the verdicts then claim)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxprobe.evals.compare.metrics.base import PairMetric, pair_metric
from ctxprobe.evals.compare.paired import kl_gate
from ctxprobe.evals.compare.paired.kl import pair_kl
from ctxprobe.evals.compare.sequential.gate import SequentialRow
from ctxprobe.evals.records.record import SampleRecord


@pair_metric
class KL(PairMetric):
    name = "kl"
    method = kl_gate.KL_GATE_METHOD
    unit_note = (
        f"kl is the mean KL in nats (each pair's counted up to {kl_gate.CAP_TIMES:g} margins), a FAIL above "
        "the margin, a PASS below it"
    )
    lo, hi = -1.0, 0.0
    margin_flag = "--kl-margin"

    def available(self, records: Sequence[SampleRecord]) -> bool:
        """Any record with answer log-probabilities and a top-k list to compare (what KL needs on each side)."""
        return any(pair_kl(r, r) is not None for r in records)

    def missing(self, baseline: str) -> str:
        return (
            f"--metric kl: the baseline {baseline} has no answer log-probabilities with top-k alternatives (run "
            "it with --logprobs and --top-logprobs of at least 1, on an engine that gives them)"
        )

    def diff(self, base: SampleRecord, cand: SampleRecord, margin: float) -> float | None:
        kl = pair_kl(base, cand)
        return None if kl is None else kl_gate.scaled(kl, margin)

    def margin_of(self, fail_if_drop: float, kl_margin: float) -> float:
        return kl_margin

    def row_margin(self, margin: float) -> float:
        return kl_gate.ROW_MARGIN

    def row(self, primary: bool) -> SequentialRow:
        return kl_gate.kl_row(primary)

    def shown(self, row: SequentialRow, alpha: float, margin: float) -> dict[str, float]:
        lo, hi = row.interval(alpha)
        lo, hi = kl_gate.nats_interval(lo, hi, margin)
        return {"diff": kl_gate.in_nats(row.tally.mean, margin), "diff_lo": lo, "diff_hi": hi}

    def text(self, value: float) -> str:
        return f"{value:.4f}"
