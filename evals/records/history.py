"""What `ctxprobe history` writes (`history.json`) and the report reads back: every finished run of one
suite, its accuracy per family x length, and each night against the one before. Computed in
`evals.compare.history`; typed and versioned here."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ctxprobe.evals.records.compare import CompareRow, RunInput
from ctxprobe.evals.records.outputs import read_output
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion

HISTORY_JSON = "history.json"


class HistoryPoint(BaseModel):
    """One run's accuracy in one family x length row (depths pooled)."""

    run: str
    label: str
    created: float
    family: str
    variant: str
    haystack: str
    context_tokens: int
    n: int
    correct: int
    accuracy: float | None
    ci_lo: float
    ci_hi: float
    errors: int


class NightStep(BaseModel):
    """One run against the run before it: the paired family x length rows, and the flagged drops."""

    previous: str
    current: str
    pairs: int = 0
    rows: list[CompareRow] = Field(default_factory=list)
    drops: list[CompareRow] = Field(default_factory=list)
    flagged: list[str] = Field(
        default_factory=list,
        description="each flagged row as the tables say it, in the "
        "history's metric (empty in histories written before it: `drops` then)",
    )
    signals: list[str] = Field(
        default_factory=list,
        description="beside a flagged drop: one line per signal that moved with it (`evals/compare/signals.py`)",
    )
    note: str | None = None


class HistoryResult(BaseModel):
    """One suite's history: `history.json`."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    suite: str
    alpha: float
    metric: Literal["correct", "p_answer", "kl"] = Field(
        "correct",
        description="what flags a night: a significant drop in accuracy or in p_answer, or KL above `kl_margin`",
    )
    kl_margin: float | None = None
    runs: list[RunInput]
    points: list[HistoryPoint]
    steps: list[NightStep]
    skipped: list[str] = Field(
        default_factory=list,
        description="folders left out, each with why: a manifest "
        "that could not be read, or a run of the suite that is not finished",
    )
    out_dir: str | None = None
    files: list[str] = Field(default_factory=list)

    @property
    def flagged(self) -> list[NightStep]:
        return [s for s in self.steps if s.drops]


def read_history(folder: Path) -> HistoryResult:
    """A history folder's `history.json` (any version)."""
    return read_output(Path(folder) / HISTORY_JSON, HistoryResult)
