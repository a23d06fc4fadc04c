"""The run store keeps every finished sample: a torn last line is dropped, resume leaves each id once."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.run.record import ErrorKind
from ctxprobe.evals.run.store import RunStore
from tests.evals.factories import make_record


def test_torn_last_line_is_skipped_and_compaction_keeps_ids_unique(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = make_record(seed=1, correct=True)
    b = make_record(seed=2, correct=False)
    b_err = make_record(seed=2, error=ErrorKind.timeout)
    for rec in (a, b_err, b):
        store.append(rec)
    store.close()
    with store.samples_path.open("a") as fh:
        fh.write(make_record(seed=3, correct=True).model_dump_json()[:50])  # killed mid-write
    latest = store.latest_records()
    assert sorted(latest) == sorted([a.sample.sample_id, b.sample.sample_id])
    assert latest[b.sample.sample_id].error is None
    store.keep_only(list(latest.values()))
    lines = store.samples_path.read_text().splitlines()
    assert len(lines) == 2 and all(line.endswith("}") for line in lines)
