"""The verdict on a comparison: Holm-adjusted p-values over the family x length rows of each candidate
(each candidate against the baseline is its own family of tests, so adding a candidate never changes
another's verdict), which rows differ at alpha, which ones the gate fails, and examples of the worse build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxprobe.evals.log.compare import CompareRow, Example
from ctxprobe.evals.log.record import SampleRecord
from ctxprobe.evals.paired.pairing import Pair
from ctxprobe.evals.paired.rows import group_key
from ctxprobe.evals.paired.stats import holm
from ctxprobe.evals.sequential.holm import row_weights, weighted_holm

if TYPE_CHECKING:
    from ctxprobe.evals.sequential.ci_outputs import GateCase

EXAMPLES_PER_ROW = 3


def adjust(rows: list[CompareRow], alpha: float) -> list[CompareRow]:
    """Family x length rows with `p_holm` and `significant` set (Holm over all of them, one candidate)."""
    adjusted = holm([r.p_value for r in rows])
    return [r.model_copy(update={"p_holm": p, "significant": p < alpha}) for r, p in zip(rows, adjusted)]


def adjust_gate(rows: list[CompareRow], alpha: float) -> list[CompareRow]:
    """The gate's rows of one candidate (each family pooled over its lengths, the primary tests, and each
    family x length) with `p_holm` and `significant` set: one weighted Holm over all of them, the pooled
    rows holding most of alpha (`evals.sequential.holm`)."""
    adjusted = weighted_holm([r.p_value for r in rows], row_weights([r.level == "family" for r in rows]))
    return [r.model_copy(update={"p_holm": p, "significant": p < alpha}) for r, p in zip(rows, adjusted)]


def failing_rows(rows: list[CompareRow], margin: float, alpha: float) -> list[CompareRow]:
    """The gate: pooled family and family x length rows where the candidate is worse by more than
    `margin` and the drop is significant after the adjustment."""
    return [r for r in rows if r.level in ("family", "family_length") and r.diff < -margin
            and r.p_holm is not None and r.p_holm < alpha]


def row_verdict(row: CompareRow, failed: bool, margin: float) -> str:
    """FAIL (the gate fails the row), PASS (its interval lies wholly above -margin: any drop is within
    the margin) or UNDECIDED."""
    if failed:
        return "FAIL"
    return "PASS" if row.diff_lo > -margin else "UNDECIDED"


def examples(candidate: str, pairs: list[Pair], rows: list[CompareRow],
             per_row: int = EXAMPLES_PER_ROW) -> list[Example]:
    """Up to `per_row` discordant pairs against the worse build of each family x length row that differs."""
    out: list[Example] = []
    for row in rows:
        if row.diff == 0 or row.level != "family_length":
            continue
        worse = "candidate" if row.diff < 0 else "baseline"
        key = (row.family, row.variant, row.haystack, row.context_tokens, None)
        chosen = [p for p in pairs if group_key(p, "family_length") == key and _lost(p, worse)][:per_row]
        out += [_example(candidate, row.where(), worse, p) for p in chosen]
    return out


def _correct(record: SampleRecord) -> bool:
    return bool(record.score and record.score.correct)


def _lost(pair: Pair, worse: str) -> bool:
    base, cand = _correct(pair.base), _correct(pair.cand)
    return base and not cand if worse == "candidate" else cand and not base


def _example(candidate: str, where: str, worse: str, pair: Pair) -> Example:
    sample = pair.base.sample
    target = next((n for n in sample.needles if n.role == "target"), None)
    return Example(
        candidate=candidate, where=where, worse=worse, sample_id=pair.cand.sample.sample_id,
        expected=list(sample.expected.answers),
        base_extracted=list(pair.base.score.extracted if pair.base.score else []),
        cand_extracted=list(pair.cand.score.extracted if pair.cand.score else []),
        needle_depth=target.depth_pct if target else float(sample.recipe.depth),
    )


def gate_cases(rows: list[CompareRow], failed: list[CompareRow], margin: float) -> list["GateCase"]:
    """The gate's rows as CI cases (`evals.sequential.ci_outputs`), each with its verdict."""
    from ctxprobe.evals.sequential.ci_outputs import GateCase

    failing = {(r.candidate, r.where()) for r in failed}
    out = []
    for r in rows:
        p_holm = r.p_holm if r.p_holm is not None else float("nan")
        out.append(GateCase(
            candidate=r.candidate, where=r.where(), primary=r.level == "family",
            verdict=row_verdict(r, (r.candidate, r.where()) in failing, margin), diff=r.diff, diff_lo=r.diff_lo,
            diff_hi=r.diff_hi, n=r.n, detail=f"baseline {100 * r.base_accuracy:.0f}% vs candidate "
            f"{100 * r.cand_accuracy:.0f}%, p_holm {p_holm:.3g}"))
    return out
