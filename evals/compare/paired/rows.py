"""Comparison rows: per cell (family x parameters x haystack x length x depth) and per family x length
with depths pooled, each build's accuracy over the same pairs, the paired difference with its interval,
the exact McNemar p-value, partial credit's mean difference with a seeded paired bootstrap interval, and
the answer probability's paired difference where the records have one (`p_answer`).
Grouping and labels are the run table's (`evals.log.rows.variant_label`), so a row here names what a row there does.

A row that pools several pairs of one chain of a nested run (a family x length over its depths, a family
over its lengths) judges chains, not pairs (`evals.compare.clusters`): each chain's mean paired difference
is one observation, its interval and p-value are the betting ones on those means (valid at any number of
chains, for a fixed run and an adaptive one alike: McNemar's test and the exact paired interval assume
independent pairs), partial credit's bootstrap resamples chains, and the row says how many chains it has
(`clusters`). Cells, and every row of the independent layout, are computed as before."""

from __future__ import annotations

from ctxprobe.evals.compare.clusters import chain_means, cluster_of, is_clustered
from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.paired.p_answer import answer_probability_row, two_sided_anytime_p
from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.compare.paired.stats import (
    PairedCounts,
    counts_from,
    mcnemar_exact,
    paired_bootstrap,
    paired_interval,
)
from ctxprobe.evals.compare.sequential.betting import Evidence, PairedValues, betting_cs
from ctxprobe.evals.records.compare import CompareRow, Level
from ctxprobe.evals.records.rows import variant_label

__all__ = ["CompareRow", "Level", "compare_rows", "group_key", "grouped"]


GroupKey = tuple[str, str, str, int, float | None]


def group_key(pair: Pair, level: Level) -> GroupKey:
    recipe = pair.base.sample.recipe
    depth = float(recipe.depth) if level == "cell" else None
    length = 0 if level == "family" else recipe.context_tokens
    return (recipe.family, variant_label(recipe.params, recipe.family), recipe.haystack, length, depth)


def grouped(pairs: list[Pair], level: Level) -> dict[GroupKey, list[Pair]]:
    groups: dict[GroupKey, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(group_key(pair, level), []).append(pair)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][:4], kv[0][4] or 0.0)))


def compare_rows(
    candidate: str, pairs: list[Pair], level: Level, anytime: bool = False, alpha: float = 0.05
) -> list[CompareRow]:
    """One row per group of `pairs` at `level`, sorted by family, variant, haystack, length, depth. With
    `anytime` (runs that stopped adaptively) the interval and p-value are anytime-valid (the paired gate's
    betting ones). `alpha` sets the p_answer bounds the gate reads (each one-sided at alpha)."""
    rows = []
    for (family, variant, haystack, length, depth), group in grouped(pairs, level).items():
        base = [bool(p.base.score and p.base.score.correct) for p in group]
        cand = [bool(p.cand.score and p.cand.score.correct) for p in group]
        counts = counts_from(base, cand)
        base_partial = [p.base.score.partial if p.base.score else 0.0 for p in group]
        cand_partial = [p.cand.score.partial if p.cand.score else 0.0 for p in group]
        clusters = [cluster_of(p.base) for p in group]
        chains: int | None = None
        if is_clustered(clusters):
            chains = len(set(clusters))
            evidence = chain_evidence(group)
            lo, hi = betting_cs(evidence)
            p_value = two_sided_anytime_p(evidence)
            mean, plo, phi = paired_bootstrap(chain_means(base_partial, clusters), chain_means(cand_partial, clusters))
        else:
            lo, hi = anytime_interval(counts) if anytime else paired_interval(counts)
            p_value = anytime_p(counts) if anytime else mcnemar_exact(counts.base_only, counts.cand_only)
            mean, plo, phi = paired_bootstrap(base_partial, cand_partial)
        rows.append(
            CompareRow(
                candidate=candidate,
                level=level,
                family=family,
                variant=variant,
                haystack=haystack,
                context_tokens=length,
                depth=depth,
                n=counts.n,
                base_correct=sum(base),
                cand_correct=sum(cand),
                base_accuracy=counts.base_accuracy,
                cand_accuracy=counts.cand_accuracy,
                diff=counts.difference,
                diff_lo=lo,
                diff_hi=hi,
                base_only=counts.base_only,
                cand_only=counts.cand_only,
                p_value=p_value,
                clusters=chains,
                partial_base=sum(base_partial) / len(group),
                partial_cand=sum(cand_partial) / len(group),
                partial_diff=mean,
                partial_lo=plo,
                partial_hi=phi,
                p_answer=answer_probability_row([p.base for p in group], [p.cand for p in group], alpha),
            )
        )
    return rows


def chain_evidence(group: list[Pair]) -> PairedValues:
    """A row's correctness differences as the chains' means (-1 to 1 each): what a row pooling a nested
    run's chains bets on."""
    diffs = [
        float(int(bool(p.cand.score and p.cand.score.correct)) - int(bool(p.base.score and p.base.score.correct)))
        for p in group
    ]
    return PairedValues(tuple(chain_means(diffs, [cluster_of(p.base) for p in group])))


def row_evidence(group: list[Pair], counts: PairedCounts) -> Evidence:
    """What the paired gate bets on for a row: its counts, or its chains' means where it pools chains."""
    return chain_evidence(group) if is_clustered([cluster_of(p.base) for p in group]) else _tally(counts)


def _tally(counts: PairedCounts) -> PairedTally:
    return PairedTally(losses=counts.base_only, ties=counts.both + counts.neither, wins=counts.cand_only)


def anytime_interval(counts: PairedCounts) -> tuple[float, float]:
    """The 95% confidence sequence of the mean paired difference (valid after optional stopping): the betting
    one the paired gate (`run --against`) reads, so both say the same of the same pairs."""
    return betting_cs(_tally(counts)) if counts.n else (float("nan"), float("nan"))


def anytime_p(counts: PairedCounts) -> float:
    """Two-sided anytime-valid p-value of "no difference": the betting e-value against "no drop" (the
    gate's FAIL evidence; ties stake nothing, as in McNemar's test) or against "no gain", doubled for the
    two sides."""
    return two_sided_anytime_p(_tally(counts))
