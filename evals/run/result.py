"""How a run ended: its exit code (`ExitCode`, documented in docs/run-folder.md and `ctxprobe run --help`) and the
`RunResult` `ctxprobe.run` returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.records.write_errors import WRITE_FAILED_EXIT
from ctxprobe.evals.run.send.loop import Progress


class ExitCode(IntEnum):
    OK = 0
    SAMPLE_ERRORS = 1  # also: `--against`, a row FAILs
    BAD_INPUT = 2
    ENDPOINT_LOST = 3
    WRITE_FAILED = WRITE_FAILED_EXIT
    UNDECIDED = 6  # `--against`: no row FAILs, some stay undecided
    ENGINE_FAULT = 7  # the cache-path control: the engine's prefix-cache path changes answers
    INTERRUPTED = 130


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
