"""Recall capacity: at each length, accuracy against the number of facts held at once (the `facts`
parameter of the capacity family), and the capacity itself.

The rule: at one length, the capacity is the largest N tested such that the 95% Clopper-Pearson lower bound of the
accuracy is at least the threshold (default 0.9) at N and at every smaller N tested. A curve that dips and
recovers does not earn the later N: what is held together must hold at every smaller load too. Shown as
`>=N` when every N tested passed (the capacity is at least the largest tested) and `<N` when not even the
fewest did. Accuracy is the exact score (every asked value right), depths pooled, errors apart (never
counted), as in every other table; with one fact asked per sample it is the chance that a fact, any of the
N, is recalled. Cells come from the records' own parameters, so runs compare and trend on them unchanged."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from ctxprobe.evals.compare.stats import Z95, clopper_pearson
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.rows import variant_label
from ctxprobe.evals.report.table import CONDITION, aggregate, record_frame
from ctxprobe.tasks.lengths import format_length

DEFAULT_THRESHOLD = 0.9
LENGTH = [*CONDITION, "context_tokens"]
CURVE = [*LENGTH, "facts"]


@dataclass(frozen=True)
class Capacity:
    """The capacity of one (family, variant, haystack) at one length; `variant` leaves out `facts`."""

    family: str
    variant: str
    haystack: str
    context_tokens: int
    capacity: int  # 0: not even the fewest facts tested passed
    tested: tuple[int, ...]
    threshold: float
    too_few: int = 0  # the n of the first N that failed, when even n of n right could not have cleared the threshold

    @property
    def undecided(self) -> bool:
        """The rule stopped at an N whose samples were too few to clear the threshold at any accuracy: the
        curve says nothing about the capacity there, only about the sample size."""
        return self.too_few > 0

    @property
    def censored(self) -> bool:
        """Every N tested passed: the capacity is at least the largest."""
        return self.capacity == self.tested[-1]

    def label(self) -> str:
        if self.censored:
            return f">={self.capacity}"
        label = str(self.capacity) if self.capacity else f"<{self.tested[0]}"
        if self.undecided:
            label += f" (n={self.too_few} cannot clear {self.threshold:g}: {samples_to_clear(self.threshold)} needed)"
        return label


def samples_to_clear(threshold: float, z: float = Z95) -> int:
    """The fewest samples whose Clopper-Pearson lower bound can reach `threshold` (all of them right): 36 for 0.9."""
    n = 1
    while clopper_pearson(n, n, z)[0] < threshold and n < 100_000:
        n += 1
    return n


def capacity_records(records: Iterable[SampleRecord]) -> list[SampleRecord]:
    """The records whose task holds a number of facts."""
    return [r for r in records if "facts" in r.sample.recipe.params]


def curve_table(records: Iterable[SampleRecord], z: float = Z95) -> pd.DataFrame:
    """One row per (family, variant without facts, haystack, length, facts): n, accuracy, Clopper-Pearson interval,
    partial credit and errors, depths pooled. Empty (with its columns) when no record holds facts."""
    held = capacity_records(records)
    if not held:
        return pd.DataFrame(columns=[*CURVE, "n", "correct", "accuracy", "ci_lo", "ci_hi", "partial_mean", "errors"])
    frame = record_frame(held)
    frame["facts"] = [int(r.sample.recipe.params["facts"]) for r in held]
    frame["variant"] = [variant_label(r.sample.recipe.params, r.sample.recipe.family, without=("facts",)) for r in held]
    return aggregate(frame, CURVE, z)


def capacities(curve: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> list[Capacity]:
    """The capacity at each length of each condition, by the rule above."""
    out = []
    for (family, variant, haystack, length), block in curve.groupby(LENGTH, sort=True):
        block = block.sort_values("facts")
        held, too_few = 0, 0
        for row in block.itertuples(index=False):
            if row.n == 0 or row.ci_lo < threshold:
                too_few = int(row.n) if row.n and clopper_pearson(int(row.n), int(row.n))[0] < threshold else 0
                break
            held = int(row.facts)
        out.append(
            Capacity(
                str(family),
                str(variant),
                str(haystack),
                int(length),
                held,
                tuple(int(n) for n in block["facts"]),
                threshold,
                too_few,
            )
        )
    return out


def _cell(row: pd.Series) -> str:
    if row["n"] == 0:
        return f"- (0, {int(row['errors'])} err)" if row["errors"] else "- (0)"
    return (
        f"{round(100 * row['accuracy'])}% ({int(row['n'])}) [{round(100 * row['ci_lo'])}-{round(100 * row['ci_hi'])}]"
    )


@dataclass(frozen=True, eq=False)
class CapacityCurve:
    """A run's curve table and each length's capacity by the rule, computed once for every view of them."""

    table: pd.DataFrame
    threshold: float
    caps: dict[tuple[str, str, str, int], Capacity] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.table.empty


def capacity_curve(
    records: Iterable[SampleRecord], threshold: float = DEFAULT_THRESHOLD, z: float = Z95
) -> CapacityCurve:
    """The curve of the records that hold facts (`curve_table`) with its capacities (`capacities`)."""
    table = curve_table(records, z)
    caps = {(c.family, c.variant, c.haystack, c.context_tokens): c for c in capacities(table, threshold)}
    return CapacityCurve(table, threshold, caps)


def capacity_grids(curve: CapacityCurve) -> list[tuple[tuple[str, str, str], list[str], list[list[str]]]]:
    """Per condition: its name, a header (facts, then the lengths) and rows (one per N, then `capacity`)."""
    out = []
    for cond, block in curve.table.groupby(CONDITION, sort=True):
        lengths = sorted(int(n) for n in block["context_tokens"].unique())
        cells = {(int(r["facts"]), int(r["context_tokens"])): r for _, r in block.iterrows()}
        rows = [
            [str(n)] + [_cell(cells[(n, c)]) if (n, c) in cells else "" for c in lengths]
            for n in sorted(int(n) for n in block["facts"].unique())
        ]
        rows.append(["capacity"] + [curve.caps[(*cond, c)].label() for c in lengths])
        out.append(((str(cond[0]), str(cond[1]), str(cond[2])), ["facts"] + [format_length(c) for c in lengths], rows))
    return out


def rule_text(threshold: float) -> str:
    return (
        f"Capacity: the largest number of facts N whose accuracy has a 95% Clopper-Pearson lower bound of at least "
        f"{threshold:g} at N and at every smaller N tested (>=N: every N tested passed; <N: not even the "
        f"fewest). Cells: accuracy (n) [95% Clopper-Pearson], depths pooled; errors never counted."
    )


def capacity_markdown(curve: CapacityCurve) -> str:
    """The `summary.md` section: one table per condition, facts down, lengths across; '' without facts."""
    grids = capacity_grids(curve)
    if not grids:
        return ""
    out = ["# Recall capacity", "", rule_text(curve.threshold), ""]
    for (family, variant, haystack), header, rows in grids:
        out += [
            f"## {family} — {variant} — {haystack}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---:" for _ in header) + "|",
            *("| " + " | ".join(r) + " |" for r in rows),
            "",
        ]
    return "\n".join(out)


def capacity_text(curve: CapacityCurve) -> str:
    """The terminal's capacity tables; '' without facts."""
    out = []
    for (family, variant, haystack), header, rows in capacity_grids(curve):
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        out.append(
            f"capacity  {family}  {variant}  [{haystack}]  (threshold {curve.threshold:g}, 95% Clopper-Pearson lower bound)"
        )
        out += ["  ".join(c.rjust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
        out.append("")
    return "\n".join(out)
