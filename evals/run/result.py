"""How a run ended: its exit code (`ExitCode`, from the one table of exit codes in `tasks/exit_codes.py`, which
`ctxprobe run --help` shows) and the `RunResult` `ctxprobe.run` returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.loop import Progress
from ctxprobe.tasks.exit_codes import ExitCode


@dataclass
class RunResult:
    run_dir: Path
    manifest: RunManifest
    progress: Progress
    exit_code: ExitCode
    message: str  # how the run ended, one line for a person
    table: str = ""  # the accuracy table the command line prints (summary files written beside the samples)
    written: list[Path] = dataclasses.field(default_factory=list)  # the CI outputs asked for (--junit, --summary-md)

    def records(self) -> list[SampleRecord]:
        return list(RunStore(self.run_dir).latest_records().values())
