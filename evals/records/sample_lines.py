"""A run's side files of one line per sample (the judge's verdicts, the cache-path checks): read the latest line
of each sample, damaged lines skipped with a warning, and append one line written whole."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ctxprobe.evals.records.lines import iter_lines
from ctxprobe.evals.records.schema import versioned
from ctxprobe.evals.records.write_errors import WriteFailed

__all__ = ["append_line", "read_latest"]


M = TypeVar("M", bound=BaseModel)


def read_latest(path: Path, model: type[M]) -> dict[str, M]:
    """The latest line of each sample in `path`, read as `model` ({} when there is no such file)."""
    out: dict[str, M] = {}
    if not path.is_file():
        return out
    skipped = 0
    for _, raw, ended in iter_lines(path):
        if not ended:
            break  # cut off mid-write
        try:
            line = model.model_validate(versioned(json.loads(raw.decode("utf-8"))))
        except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
            skipped += 1
            continue
        out[line.sample_id] = line  # type: ignore[attr-defined]  # both models read so (judge, cache check) have it
    if skipped:
        warnings.warn(f"{path}: {skipped} damaged line(s) skipped", stacklevel=3)
    return out


def append_line(path: Path, line: BaseModel) -> None:
    """Add one line to `path` (written whole, then flushed)."""
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line.model_dump_json() + "\n")
    except OSError as error:
        raise WriteFailed(path, error) from None
