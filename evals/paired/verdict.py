"""The verdict on a comparison: Holm-adjusted p-values over the family x length rows of each candidate
(each candidate against the baseline is its own family of tests, so adding a candidate never changes
another's verdict), which rows differ at alpha, which ones the gate fails, and examples of the worse build."""

from __future__ import annotations

from ctxprobe.evals.log.compare import CompareRow, Example
from ctxprobe.evals.log.record import SampleRecord
from ctxprobe.evals.paired.pairing import Pair
from ctxprobe.evals.paired.rows import group_key
from ctxprobe.evals.paired.stats import holm

EXAMPLES_PER_ROW = 3


def adjust(rows: list[CompareRow], alpha: float) -> list[CompareRow]:
    """Family x length rows with `p_holm` and `significant` set (Holm over all of them, one candidate)."""
    adjusted = holm([r.p_value for r in rows])
    return [r.model_copy(update={"p_holm": p, "significant": p < alpha}) for r, p in zip(rows, adjusted)]


def failing_rows(rows: list[CompareRow], margin: float, alpha: float) -> list[CompareRow]:
    """The gate: family x length rows where the candidate is worse by more than `margin` and the drop is
    significant after Holm's adjustment."""
    return [r for r in rows if r.level == "family_length" and r.diff < -margin
            and r.p_holm is not None and r.p_holm < alpha]


def examples(candidate: str, pairs: list[Pair], rows: list[CompareRow],
             per_row: int = EXAMPLES_PER_ROW) -> list[Example]:
    """Up to `per_row` discordant pairs against the worse build of each family x length row that differs."""
    out: list[Example] = []
    for row in rows:
        if row.diff == 0:
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
