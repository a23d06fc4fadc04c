"""A run folder on disk: manifest.json, samples.jsonl (one SampleRecord per line, flushed and fsynced
as each sample finishes, so a run killed at any moment loses no finished sample).

samples.jsonl is append-only: nothing ever rewrites or deletes a line. A sample sent again (after an
error, on resume) gets a new line, and the last line of an id is the one that counts."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ValidationError

from ctxprobe.evals.log.lines import DamagedLine, read_records, warn_damaged
from ctxprobe.evals.log.manifest import RunManifest
from ctxprobe.evals.log.record import SampleRecord
from ctxprobe.evals.log.schema import versioned
from ctxprobe.tasks.errors import UserError, first_problem

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"


class RunStore:
    def __init__(self, run_dir: Path) -> None:
        self.dir = Path(run_dir)
        self._fh: Any = None

    @property
    def samples_path(self) -> Path:
        return self.dir / SAMPLES

    def write_manifest(self, manifest: BaseModel | dict[str, Any]) -> None:
        data = manifest.model_dump(mode="json") if isinstance(manifest, BaseModel) else manifest
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.dir / MANIFEST)

    def read_manifest(self) -> dict[str, Any]:
        path = self.dir / MANIFEST
        if not path.is_file():
            raise UserError(f"not a run folder (no {MANIFEST}): {self.dir}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UserError(f"corrupt {MANIFEST} in {self.dir}") from None
        if not isinstance(data, dict):
            raise UserError(f"corrupt {MANIFEST} in {self.dir}")
        return data

    def load_manifest(self) -> RunManifest:
        """The typed manifest; one line naming the problem when it is not one."""
        data = self.read_manifest()
        try:
            return RunManifest.model_validate(versioned(data))
        except ValidationError as exc:
            where, msg, _ = first_problem(exc)
            raise UserError(f"corrupt {MANIFEST} in {self.dir}: {where or 'top level'}: {msg}") from None

    def records(self) -> Iterator[SampleRecord]:
        """Every complete record. A torn last line (a kill during a write) is skipped; so is a damaged line
        anywhere (blank, NULs, not UTF-8, not a record), named once in a `DamagedLineWarning` (see
        `evals/log/lines.py`): one bad line never makes the run unreadable."""
        damaged: list[DamagedLine] = []
        for _, record in read_records(self.samples_path, damaged):
            yield record
        warn_damaged(self.samples_path, damaged)

    def latest_records(self) -> dict[str, SampleRecord]:
        """One record per sample id: the last one written."""
        return {r.sample.sample_id: r for r in self.records()}

    def append(self, record: SampleRecord) -> None:
        if self._fh is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._cut_torn_tail()
            self._fh = self.samples_path.open("a", encoding="utf-8")
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def _cut_torn_tail(self) -> None:
        """A line without its newline was being written when a run was killed: that sample never finished.
        Cut it off, so the next record starts on a line of its own (the finished lines stay as they are)."""
        if not self.samples_path.exists():
            return
        with self.samples_path.open("rb+") as fh:
            data = fh.read()
            end = data.rfind(b"\n") + 1
            if end < len(data):
                fh.truncate(end)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def run_folder(results_dir: Path, label: str) -> Path:
    """A new, not yet existing folder `results_dir/<time>-<label>`; `results_dir` must be usable."""
    for parent in (results_dir, *results_dir.parents):
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"results folder {results_dir} cannot be made: {parent} is a file")
            break
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-")
    base = results_dir / (f"{stamp}-{safe}" if safe else stamp)
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path
