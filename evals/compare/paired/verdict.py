"""The verdict on a comparison: Holm-adjusted p-values over the family x length rows of each candidate
(each candidate against the baseline is its own family of tests, so adding a candidate never changes
another's verdict), which rows differ at alpha, which ones the gate fails, and examples of the worse build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.compare.paired.rows import group_key
from ctxprobe.evals.compare.paired.stats import holm
from ctxprobe.evals.compare.sequential.holm import row_weights, weighted_holm
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.compare import CompareResult, CompareRow, Example
from ctxprobe.evals.records.kl import find_row
from ctxprobe.evals.records.record import SampleRecord

if TYPE_CHECKING:
    from ctxprobe.evals.compare.sequential.betting import Evidence
    from ctxprobe.evals.compare.sequential.ci_outputs import GateCase

EXAMPLES_PER_ROW = 3


def adjust(rows: list[CompareRow], alpha: float) -> list[CompareRow]:
    """Family x length rows with `p_holm` and `significant` set (Holm over all of them, one candidate)."""
    adjusted = holm([r.p_value for r in rows])
    return [r.model_copy(update={"p_holm": p, "significant": p < alpha}) for r, p in zip(rows, adjusted)]


def adjust_gate(rows: list[CompareRow], alpha: float) -> list[CompareRow]:
    """The gate's rows of one candidate (each family pooled over its lengths, the primary tests, and each
    family x length) with `p_holm` and `significant` set: one weighted Holm over all of them, the pooled
    rows holding most of alpha (`evals.sequential.holm`). The p_answer p-values, where rows have them, get
    their own weighted Holm over the rows that have one."""
    weights = row_weights([r.level == "family" for r in rows])
    adjusted = weighted_holm([r.p_value for r in rows], weights)
    out = [r.model_copy(update={"p_holm": p, "significant": p < alpha}) for r, p in zip(rows, adjusted)]
    having = [i for i, r in enumerate(out) if r.p_answer is not None]
    if having:
        pa = weighted_holm(
            [row.p_value for i in having if (row := out[i].p_answer) is not None],
            row_weights([out[i].level == "family" for i in having]),
        )
        for i, p in zip(having, pa):
            stats = out[i].p_answer
            assert stats is not None
            out[i] = out[i].model_copy(update={"p_answer": stats.model_copy(update={"p_holm": p})})
    return out


def failing_rows(rows: list[CompareRow], margin: float, alpha: float) -> list[CompareRow]:
    """The gate: pooled family and family x length rows where the candidate is worse by more than
    `margin` and the drop is significant after the adjustment."""
    return [
        r
        for r in rows
        if r.level in ("family", "family_length") and r.diff < -margin and r.p_holm is not None and r.p_holm < alpha
    ]


def row_tally(row: CompareRow) -> PairedTally:
    """A row's pairs as the paired gate counts them: lost, tied, won by the candidate."""
    return PairedTally(losses=row.base_only, ties=row.n - row.base_only - row.cand_only, wins=row.cand_only)


def sequential_gate(
    rows: list[CompareRow], margin: float, alpha: float, evidence: list[Evidence] | None = None
) -> tuple[list[CompareRow], list[CompareRow]]:
    """The gate's rows of one candidate judged as the paired gate (`run --against`) judges them: each row's
    betting e-values from its pairs (its counts, or `evidence`: one p_answer `PairedValues` per row), FAIL
    on weighted Holm, PASS each row at alpha (`evals.sequential.gate`). Returns the rows that FAIL and
    those that PASS. Read from the final pairs, it can only be as decided as the gate was (a running
    maximum is never below the last value). A row with no evidence stays undecided."""
    from ctxprobe.evals.compare.sequential.betting import log_e_fail, log_e_pass
    from ctxprobe.evals.compare.sequential.gate import SequentialRow, final_verdicts

    seq = []
    for r, tally in zip(rows, evidence if evidence is not None else [row_tally(r) for r in rows], strict=True):
        seq.append(
            SequentialRow(
                primary=r.level == "family",
                tally=tally,
                log_e_fail=log_e_fail(tally),
                log_e_pass=log_e_pass(margin, tally),
            )
        )
    verdicts = final_verdicts(seq, margin, alpha)
    return ([r for r, v in zip(rows, verdicts) if v == "FAIL"], [r for r, v in zip(rows, verdicts) if v == "PASS"])


def correct_evidence(rows: list[CompareRow], pairs: list[Pair]) -> list[Evidence]:
    """Each gate row's correctness evidence, in the rows' order: its counts, or (a row pooling a nested run's
    chains) its chains' mean differences (`paired.rows.row_evidence`)."""
    from ctxprobe.evals.compare.paired.rows import chain_evidence

    out: list[Evidence] = []
    for r in rows:
        if r.clusters is None:
            out.append(row_tally(r))
            continue
        key = (r.family, r.variant, r.haystack, r.context_tokens, None)
        out.append(chain_evidence([p for p in pairs if group_key(p, r.level) == key]))
    return out


def p_answer_evidence(rows: list[CompareRow], pairs: list[Pair]) -> list[Evidence]:
    """Each gate row's p_answer differences (its pairs where both records have one), in the rows' order."""
    from ctxprobe.evals.compare.paired.p_answer import row_values

    out: list[Evidence] = []
    for r in rows:
        key = (r.family, r.variant, r.haystack, r.context_tokens, None)
        group = [p for p in pairs if group_key(p, r.level) == key]
        out.append(row_values([p.base for p in group], [p.cand for p in group]))
    return out


def row_verdict(row: CompareRow, failed: bool, margin: float, passed: bool | None = None) -> str:
    """FAIL (the gate fails the row), PASS (its interval lies wholly above -margin: any drop is within
    the margin; for adaptive runs, `passed`: the paired gate's rule) or UNDECIDED."""
    if failed:
        return "FAIL"
    if passed is not None:
        return "PASS" if passed else "UNDECIDED"
    return "PASS" if row.diff_lo > -margin else "UNDECIDED"


def examples(
    candidate: str, pairs: list[Pair], rows: list[CompareRow], per_row: int = EXAMPLES_PER_ROW
) -> list[Example]:
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
        candidate=candidate,
        where=where,
        worse=worse,
        sample_id=pair.cand.sample.sample_id,
        expected=list(sample.expected.answers),
        base_extracted=list(pair.base.score.extracted if pair.base.score else []),
        cand_extracted=list(pair.cand.score.extracted if pair.cand.score else []),
        needle_depth=target.depth_pct if target else float(sample.recipe.depth),
    )


def gate_cases(result: CompareResult) -> list[GateCase]:
    """The gate's rows of a comparison as CI cases (`evals.sequential.ci_outputs`), each with its verdict.
    For runs that stopped adaptively, and for the p_answer metric, the verdicts and bounds are the paired
    gate's (each bound one-sided). Each case names the other metric beside its own where the rows have both."""
    from ctxprobe.evals.compare.sequential.betting import betting_cs
    from ctxprobe.evals.compare.sequential.ci_outputs import FIXED_INTERVAL, SEQUENTIAL_INTERVAL, GateCase, metric_text

    failing = {(r.candidate, r.where()) for r in result.failed}
    passing = None if result.passed is None else {(r.candidate, r.where()) for r in result.passed}
    any_p = any(r.p_answer is not None for r in result.gate_rows())
    out = []
    for r in result.gate_rows():
        p_holm = r.p_holm if r.p_holm is not None else float("nan")
        lo, hi, interval = r.diff_lo, r.diff_hi, FIXED_INTERVAL
        if passing is not None and r.n and r.clusters is None:
            (lo, hi), interval = betting_cs(row_tally(r), min(2.0 * result.alpha, 0.99)), SEQUENTIAL_INTERVAL
        elif r.clusters is not None:  # the chains' two-sided 95 % sequence: it holds each one-sided 95 % bound
            interval = SEQUENTIAL_INTERVAL
        verdict = row_verdict(
            r,
            (r.candidate, r.where()) in failing,
            result.fail_if_drop or 0.0,
            None if passing is None else (r.candidate, r.where()) in passing,
        )
        correct = dict(
            diff=r.diff,
            diff_lo=lo,
            diff_hi=hi,
            n=r.n,
            interval=interval,
            detail=f"baseline {100 * r.base_accuracy:.0f}% vs candidate {100 * r.cand_accuracy:.0f}%, "
            f"p_holm {p_holm:.3g}",
        )
        pa = r.p_answer
        if result.metric == "kl":
            kr = find_row(result.kl, r.candidate, r.level, r.family, r.variant, r.haystack, r.context_tokens)
            own = (
                dict(
                    diff=kr.kl,
                    diff_lo=kr.gate_lo,
                    diff_hi=kr.gate_hi,
                    n=kr.n,
                    interval=SEQUENTIAL_INTERVAL,
                    detail=f"mean KL over {kr.positions} answer positions, top-1 agreement {100 * kr.top1:.0f}%",
                )
                if kr is not None and kr.verdict is not None
                else dict(
                    diff=float("nan"),
                    diff_lo=float("nan"),
                    diff_hi=float("nan"),
                    n=0,
                    interval=SEQUENTIAL_INTERVAL,
                    detail="no pair has top-k answer log-probabilities on both sides",
                )
            )
            verdict = kr.verdict if kr is not None and kr.verdict is not None else "UNDECIDED"
            other = metric_text("correct", r.diff, lo, hi, r.n, interval)
        elif result.metric == "p_answer":
            own = (
                dict(
                    diff=pa.diff,
                    diff_lo=pa.gate_lo,
                    diff_hi=pa.gate_hi,
                    n=pa.n,
                    interval=SEQUENTIAL_INTERVAL,
                    detail=f"p_answer baseline {pa.base:.3f} vs candidate {pa.cand:.3f} ({pa.n} of "
                    f"{pa.n + pa.missing} pairs have it)",
                )
                if pa is not None
                else dict(
                    diff=float("nan"),
                    diff_lo=float("nan"),
                    diff_hi=float("nan"),
                    n=0,
                    interval=SEQUENTIAL_INTERVAL,
                    detail="no pair has answer probabilities on both sides",
                )
            )
            other = metric_text("correct", r.diff, lo, hi, r.n, interval)
        else:
            own = correct
            other = (
                ""
                if not any_p
                else "p_answer: no pair has it"
                if pa is None
                else metric_text("p_answer", pa.diff, pa.gate_lo, pa.gate_hi, pa.n, SEQUENTIAL_INTERVAL)
            )
        out.append(
            GateCase(
                candidate=r.candidate,
                where=r.where(),
                primary=r.level == "family",
                verdict=verdict,
                metric=result.metric,
                other=other,
                **own,
            )
        )
    return out


def compare_verdict(result: CompareResult) -> str | None:
    """The gate's word on a comparison, PASS, FAIL or UNDECIDED (None when no gate was asked for: no
    `fail_if_drop`, no `--metric kl`): the verdict of its CI cases (`gate_cases`) put together by
    `overall_verdict`, so that the terminal line, compare.md, compare.json, the report, JUnit and the markdown
    summary say the same word. A row passes only when its interval lies within the margin: six pairs with an
    interval of [-59, +59] points is UNDECIDED, never a pass."""
    from ctxprobe.evals.compare.sequential.ci_outputs import gate_outcome

    if result.fail_if_drop is None and result.metric != "kl":
        return None
    return gate_outcome(gate_cases(result))


def undecided_text(result: CompareResult) -> str:
    """Why an UNDECIDED comparison is one: its primary rows that neither pass nor fail, with their intervals."""
    cases = gate_cases(result)
    primary = [c for c in cases if c.primary] or cases
    open_ = [c for c in primary if c.verdict == "UNDECIDED"]
    if not open_:
        return ""
    chains = {(r.candidate, r.where()): r.clusters for r in result.gate_rows()}

    def size(c: GateCase) -> str:
        k = chains.get((c.candidate, c.where))
        return f"{c.n} pairs" if k is None else f"{c.n} pairs in {k} chain{'' if k == 1 else 's'}"

    short = "chains" if any(chains.get((c.candidate, c.where)) is not None for c in open_) else "pairs"
    fewest = chains_to_pass(result) if short == "chains" else None
    return (
        "; ".join(f"{c.candidate} {c.where} {_bounds(c.metric, c.diff_lo, c.diff_hi)}, {size(c)}" for c in open_)
        + f" (the interval reaches past the margin: more {short} are needed to PASS"
        + (
            ": a nested run's pairs in one chain share their prompt, so the chains are what the interval counts"
            + (
                f"; at this margin a row of chains PASSes from {fewest} at the fewest, every chain equal)"
                if fewest is not None
                else ")"
            )
            if short == "chains"
            else ")"
        )
    )


def chains_to_pass(result: CompareResult) -> int | None:
    """The fewest chains at which a nested row of this comparison's gate can PASS (`gate.fewest_to_pass`, every
    chain equal), by the bound each metric's PASS reads: a correctness row's two-sided 95 % sequence (each side
    at alpha / 2), a p_answer or KL row's one-sided bound at alpha (KL counted on [-1, 0] in margins of its cap,
    `kl_gate`). None without a margin in range."""
    from ctxprobe.evals.compare.paired import kl_gate
    from ctxprobe.evals.compare.sequential.gate import fewest_to_pass

    if result.metric == "kl":
        return fewest_to_pass(kl_gate.ROW_MARGIN, result.alpha, -1.0, 0.0)
    margin = result.fail_if_drop
    if margin is None or not 0.0 < margin < 1.0:
        return None
    return fewest_to_pass(margin, result.alpha if result.metric == "p_answer" else result.alpha / 2.0)


def _bounds(metric: str, lo: float, hi: float) -> str:
    if metric == "kl":
        return f"[{lo:.4f}, {hi:.4f}] nats"
    return f"[{signed(lo)}, {signed(hi)}] points"
