"""The optional judge's verdicts, kept beside the run's samples in `judge.jsonl`, one line a judged sample,
never inside the sample records: the deterministic score stays the score, and a judge's opinion (or its
failure) is a second column the report sets against it. Lines are only appended; the latest verdict of a
sample wins when read back, and a damaged line is skipped like one of samples.jsonl."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxprobe.evals.records.lines import iter_lines
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion, versioned
from ctxprobe.evals.records.write_errors import WriteFailed

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
    path = Path(run_dir) / JUDGE_FILE
    out: dict[str, JudgeVerdict] = {}
    if not path.is_file():
        return out
    skipped = 0
    for _, raw, ended in iter_lines(path):
        if not ended:
            break  # cut off mid-write
        try:
            verdict = JudgeVerdict.model_validate(versioned(json.loads(raw.decode("utf-8"))))
        except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
            skipped += 1
            continue
        out[verdict.sample_id] = verdict
    if skipped:
        warnings.warn(f"{path}: {skipped} damaged line(s) skipped", stacklevel=2)
    return out


def append_verdict(run_dir: Path, verdict: JudgeVerdict) -> None:
    """Add one verdict to the run's judge file (a line is written whole, then flushed)."""
    path = Path(run_dir) / JUDGE_FILE
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(verdict.model_dump_json() + "\n")
    except OSError as error:
        raise WriteFailed(path, error) from None
