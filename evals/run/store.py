"""A run folder on disk: manifest.json, samples.jsonl (one SampleRecord per line, flushed and fsynced
as each sample finishes, so a run killed at any moment loses no finished sample)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ctxprobe.evals.run.record import SampleRecord
from ctxprobe.tasks.errors import UserError

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"


class RunStore:
    def __init__(self, run_dir: Path) -> None:
        self.dir = Path(run_dir)
        self._fh: Any = None

    @property
    def samples_path(self) -> Path:
        return self.dir / SAMPLES

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.dir / MANIFEST)

    def read_manifest(self) -> dict[str, Any]:
        path = self.dir / MANIFEST
        if not path.is_file():
            raise UserError(f"not a run folder (no {MANIFEST}): {self.dir}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise UserError(f"corrupt {MANIFEST} in {self.dir}") from None
        if not isinstance(data, dict):
            raise UserError(f"corrupt {MANIFEST} in {self.dir}")
        return data

    def records(self) -> Iterator[SampleRecord]:
        """Every complete record; a torn last line (a kill during a write) is skipped."""
        if not self.samples_path.exists():
            return
        with self.samples_path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break  # torn write: the sample was not finished
                try:
                    yield SampleRecord.model_validate_json(line)
                except ValidationError:
                    raise UserError(f"corrupt line in {self.samples_path}") from None

    def latest_records(self) -> dict[str, SampleRecord]:
        """One record per sample id: the last one written."""
        return {r.sample.sample_id: r for r in self.records()}

    def keep_only(self, records: list[SampleRecord]) -> None:
        """Rewrite samples.jsonl with exactly these records (atomically), before resuming."""
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".{SAMPLES}.tmp"
        with tmp.open("w", encoding="utf-8") as fh:
            for record in records:
                fh.write(record.model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.samples_path)

    def append(self, record: SampleRecord) -> None:
        if self._fh is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._fh = self.samples_path.open("a", encoding="utf-8")
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
