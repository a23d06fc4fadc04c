"""The optional judge's verdicts, kept beside the run's samples in `judge.jsonl`, one line a judged sample,
never inside the sample records: the deterministic score stays the score, and a judge's opinion (or its
failure) is a second column the report sets against it. Lines are only appended; the latest verdict of a
sample wins when read back, and a damaged line is skipped like one of samples.jsonl."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.evals.records.sample_lines import append_line, read_latest
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion

JUDGE_FILE = "judge.jsonl"


class JudgeVerdict(BaseModel):
    """One sample's verdict from the judge model, or why there is none (`error`)."""

    model_config = ConfigDict(frozen=True)

    schema_version: SchemaVersion = SCHEMA_VERSION
    sample_id: str
    judge: str = Field(description="the judge endpoint (no credentials) and its model")
    verdict: Literal["correct", "incorrect"] | None = None
    reason: str = ""
    error: str | None = Field(None, description="why the judge gave no verdict: unreachable, refused, unparsed")
    exact: bool = Field(description="the deterministic score's `correct` when judged")
    reply: str = Field("", description="the judge's raw reply, cut to 2,000 characters")
    judged_at: float = Field(default_factory=time.time)

    def disagrees(self) -> bool:
        return self.verdict is not None and (self.verdict == "correct") != self.exact


def read_verdicts(run_dir: Path) -> dict[str, JudgeVerdict]:
    """The latest verdict of each judged sample ({} when the run had no judge)."""
    return read_latest(Path(run_dir) / JUDGE_FILE, JudgeVerdict)


def append_verdict(run_dir: Path, verdict: JudgeVerdict) -> None:
    """Add one verdict to the run's judge file (a line is written whole, then flushed)."""
    append_line(Path(run_dir) / JUDGE_FILE, verdict)
