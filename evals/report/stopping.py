"""How a table shows a run that stopped its cells adaptively (`--stop decided`): each cell's interval is
its anytime-valid confidence sequence (a Wilson interval after optional stopping covers less than it
says), and its n carries why the cell stopped."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ctxprobe.evals.compare.sequential.cells import STOP_REASONS, StopRule, cell_interval, stop_reason
from ctxprobe.evals.records.manifest import RunManifest

TAGS = {"above": "A", "below": "B", "precision": "P", "cap": "C"}


@dataclass(frozen=True)
class Stopping:
    rule: StopRule
    cap: int

    def legend(self) -> str:
        goal = [
            f"A above / B below {self.rule.threshold:g}" if self.rule.threshold is not None else "",
            f"P half-width <= {self.rule.precision:g}" if self.rule.precision is not None else "",
        ]
        return (
            f"--stop decided: n then why the cell stopped ({', '.join(g for g in goal if g)}, C at the cap "
            f"{self.cap}, blank: not decided when the run ended); intervals: anytime-valid "
            f"{1 - self.rule.alpha:.0%} confidence sequences"
        )

    def cell(self, correct: int, n: int) -> tuple[float, float, str, str]:
        """One cell's confidence sequence, its tag (A, B, P, C; empty while open) and why it stopped, in
        words."""
        lo, hi = cell_interval(correct, n, self.rule.alpha)
        reason = stop_reason(correct, n, self.rule, self.cap)
        return lo, hi, TAGS.get(reason or "", ""), STOP_REASONS[reason] if reason else "not decided when the run ended"


def stopping_of(manifest: RunManifest | None) -> Stopping | None:
    """The run's rule where it stopped adaptively, else None."""
    if manifest is None or not manifest.stop:
        return None
    rule = StopRule.model_validate(manifest.stop)
    return Stopping(rule, rule.cap(manifest.suite.samples))


def apply_stopping(table: pd.DataFrame, stopping: Stopping | None) -> pd.DataFrame:
    """The table with confidence-sequence bounds and a `stop` column (the cell's reason, or empty)."""
    if stopping is None:
        return table
    out = table.copy()
    pairs = list(zip(out["correct"].astype(int), out["n"].astype(int)))
    bounds = [cell_interval(k, n, stopping.rule.alpha) for k, n in pairs]
    out["ci_lo"], out["ci_hi"] = [lo for lo, _ in bounds], [hi for _, hi in bounds]
    out["stop"] = [stop_reason(k, n, stopping.rule, stopping.cap) or "" for k, n in pairs]
    return out
