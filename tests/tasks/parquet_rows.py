"""Writing a small parquet of a published dataset's columns, for the parity fixtures of the families that
read published files (graphwalk, mrcr)."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_parquet(path: Path, rows: list[dict[str, object]]) -> Path:
    """`rows` as one parquet file at `path` (the test is skipped without pyarrow)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)
    return path
