"""The `PairMetric` a gate metric implements, and the registry `@pair_metric` adds it to."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TypeVar

from ctxprobe.evals.compare.sequential.gate import GATE_METHOD, SequentialRow
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.plugins import AS_REGISTERED, Registry

ENTRY_POINT_GROUP = "ctxprobe.gate_metrics"  # [project.entry-points."ctxprobe.gate_metrics"] name = "module"
BUILT_IN = ("correct", "p_answer", "kl")  # first, in this order (the order reports list metrics in); then the rest
# This package's metric modules and the entry points' are imported on the first look-up; a metric registered
# again under its name replaces the first.
METRICS: Registry[PairMetric] = Registry(
    "gate metric",
    package="ctxprobe.evals.compare.metrics",
    first=BUILT_IN,
    skip=("base",),
    group=ENTRY_POINT_GROUP,
    replace=True,
    order=AS_REGISTERED,
)
M = TypeVar("M", bound="type[PairMetric]")


class PairMetric(ABC):
    """One gate metric. `diff` gives a pair's difference in [`lo`, `hi`] (None: a side lacks the metric),
    where a negative value is a loss; the rows bet on these values against `row_margin(margin)`."""

    name: str = ""
    method: str = GATE_METHOD  # how the gate judges, as the report says it
    unit_note: str = ""  # what a row's difference is in, where points of accuracy are not the unit
    lo: float = -1.0
    hi: float = 1.0
    always: bool = False  # every scored pair has it (no count of pairs that lack it)
    margin_flag: str = "--fail-if-drop"  # the option that gives its margin (`margin_of`)

    def available(self, records: Sequence[SampleRecord]) -> bool:
        """Whether the baseline's records give this metric at all."""
        return True

    def missing(self, baseline: str) -> str:
        """The one line when the baseline lacks the metric."""
        return f"--metric {self.name}: the baseline {baseline} does not have it"

    @abstractmethod
    def diff(self, base: SampleRecord, cand: SampleRecord, margin: float) -> float | None:
        """Candidate against baseline, in [lo, hi]; `margin` is `margin_of`'s."""

    def margin_of(self, fail_if_drop: float, kl_margin: float) -> float:
        """The margin this metric judges against, of the options given (`--fail-if-drop` unless it says)."""
        return fail_if_drop

    def row_margin(self, margin: float) -> float:
        """The margin in the units the rows bet in."""
        return margin

    def row(self, primary: bool) -> SequentialRow:
        """A new gate row for this metric's values."""
        from ctxprobe.evals.compare.sequential.betting import PairedValues

        return SequentialRow(primary=primary, tally=PairedValues(lo=self.lo, hi=self.hi))

    def shown(self, row: SequentialRow, alpha: float, margin: float) -> dict[str, float]:
        """A row's mean difference and interval, in the metric's own units."""
        lo, hi = row.interval(alpha)
        return {"diff": row.tally.mean, "diff_lo": lo, "diff_hi": hi}

    def text(self, value: float) -> str:
        """A difference as the table prints it (points, by default)."""
        return signed(value, 1)


def pair_metric(cls: M) -> M:
    """Register a `PairMetric` subclass under its `name` (a second one of a name replaces the first)."""
    instance = cls()
    if not instance.name:
        raise ValueError(f"{cls.__name__} has no name")
    METRICS.add(instance.name, instance)
    return cls
