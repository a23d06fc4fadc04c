"""The run store keeps every finished sample: a torn last line is skipped and cut off before the next
append, no finished line is ever rewritten, and the last line of an id is the one that counts."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.records.record import ErrorKind
from ctxprobe.evals.records.store import RunStore
from tests.evals.factories import make_record


def test_torn_last_line_is_skipped_and_the_next_append_starts_a_clean_line(tmp_path: Path) -> None:
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
    finished = store.samples_path.read_text().splitlines()[:3]

    c = make_record(seed=3, correct=True)
    store.append(c)  # a resumed run appends after the torn fragment
    store.close()
    lines = store.samples_path.read_text().splitlines()
    assert lines[:3] == finished  # nothing finished was rewritten or dropped
    assert len(lines) == 4 and all(line.endswith("}") for line in lines)
    assert sorted(store.latest_records()) == sorted([a.sample.sample_id, b.sample.sample_id, c.sample.sample_id])
