"""`ctxprobe.load_run(path)`: a run folder as typed values — its manifest, its records (the last one of
each sample id) and a pandas DataFrame with one row per sample."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.rows import record_row
from ctxprobe.evals.records.store import RunStore

__all__ = ["Run", "load_run", "record_row"]

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Run:
    dir: Path
    manifest: RunManifest
    records: list[SampleRecord]

    def frame(self) -> pd.DataFrame:
        """One row per sample: the task's coordinates as columns, its outcome, and the endpoint's figures."""
        import pandas as pd

        return pd.DataFrame([record_row(r) for r in self.records])


def load_run(path: str | Path, *, needles: bool = True) -> Run:
    """Read a run folder (one line naming the problem when it is not one). `needles=False` reads each record
    as its outline (`evals/records/outline.py`): what tables, heatmaps and the report's page need."""
    store = RunStore(Path(path))
    manifest = store.load_manifest()
    store.check_records_present(manifest)
    return Run(dir=store.dir, manifest=manifest, records=list(store.latest_records(needles=needles).values()))
