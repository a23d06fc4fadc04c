"""Reading samples.jsonl line by line, tolerating damage: a disk that filled, a copy cut short, an editor,
a crash of the file system can leave a line that is blank, holds NUL bytes, is not UTF-8, is not JSON,
or is not a sample record. One such line must never make a whole run (or a results folder) unreadable:
the reader skips it, says once which file and line it skipped, and keeps every other line.

`ctxprobe check` lists the damaged lines (`scan`), and a repair writes the good lines to a clean copy
beside the original (`write_clean_copy`), never over it: nothing ever deletes a finished sample."""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.schema import versioned
from ctxprobe.tasks.errors import UserError, first_problem

CLEAN_COPY = "samples.clean.jsonl"


class DamagedLineWarning(UserWarning):
    """Lines of a samples.jsonl were skipped because they are damaged (the CLI prints it as one line)."""


@dataclass(frozen=True)
class DamagedLine:
    """One line of a samples file that is not a record: its number (1-based), why, and its first bytes."""

    line: int
    reason: str
    start: bytes

    def describe(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class Scan:
    """A samples file read through: its records in order, its damaged lines, and whether the last line was
    cut off mid-write (a run killed while writing it: that sample never finished, and is not damage)."""

    path: Path
    records: list[tuple[int, SampleRecord]]
    damaged: list[DamagedLine]
    torn_tail: int | None  # the line number of an unfinished last line, if any


def parse_line(raw: bytes, model: type[SampleRecord] = SampleRecord) -> SampleRecord | str:
    """The record one line holds (as `model`: a `RecordOutline` skips the needles), or why it holds none."""
    skimmed = model.skim(raw)
    if skimmed is not raw:  # the part the model reads; where that is no record, the whole line says why
        parsed = _parse(skimmed, model)
        if not isinstance(parsed, str):
            return parsed
    return _parse(raw, model)


def _parse(raw: bytes, model: type[SampleRecord]) -> SampleRecord | str:
    if not raw.strip():
        return "blank line"
    nuls = raw.count(b"\x00")
    if nuls:
        return f"{nuls} NUL bytes"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        if '"schema_version"' in text:
            record = model.model_validate_json(text)
        else:
            record = model.model_validate(versioned(json.loads(text)))  # before records carried a version
        why = impossible(record)
        return record if why is None else f"impossible value ({why})"
    except json.JSONDecodeError as exc:
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    except ValidationError as exc:
        where, msg, kind = first_problem(exc)
        if kind.startswith("json"):
            return f"invalid JSON ({msg})"
        return f"not a sample record ({where or 'top level'}: {msg})"


def iter_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes without the newline, whether a newline ended it), read in binary so that no
    byte can stop the reading."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            ended = raw.endswith(b"\n")
            yield number, raw[:-1] if ended else raw, ended


def impossible(record: SampleRecord) -> str | None:
    """What no run writes: a negative count, a duration that is not a finite non-negative number, a partial
    score outside 0-1. A line holding one was edited or damaged, and counts as damage, not as a sample."""
    checks: list[tuple[str, float | None, bool]] = [
        ("sample.planned_tokens", record.sample.planned_tokens, False),
        ("attempts", record.attempts, False),
    ]
    if record.response is not None:
        checks += [
            (f"response.{name}", getattr(record.response, name), False)
            for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")
        ]
        checks += [(f"response.{name}", getattr(record.response, name), True) for name in ("latency_s", "ttft_s")]
    for name, value, duration in checks:
        if value is not None and (not math.isfinite(value) or value < 0):
            return f"{name} {value} is {'not a duration' if duration else 'not a count'}"
    if record.score is not None and not 0.0 <= record.score.partial <= 1.0:
        return f"score.partial {record.score.partial} is outside 0-1"
    return None


def samples_file_exists(path: Path) -> bool:
    """Whether there is a samples file to read (False: none written yet). What stands at its name must be a
    regular file: a folder, a device, a link to one (a link to /dev/zero would be read for ever) or a link
    loop is refused in one line."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    if not path.is_file():
        raise UserError(f"{path} is not a regular file: ctxprobe reads a run's records only from one")
    return True


def read_records(
    path: Path, damaged: list[DamagedLine], model: type[SampleRecord] = SampleRecord
) -> Iterator[tuple[int, SampleRecord]]:
    """Each record of a samples file with its line number, as it is read (as `model`); each damaged line is
    added to `damaged` instead (nothing is raised for one line). An unfinished last line is neither."""
    if not samples_file_exists(path):
        return
    for number, raw, ended in iter_lines(path):
        if not ended:
            return  # the last line, cut off mid-write: that sample never finished
        parsed = parse_line(raw, model)
        if isinstance(parsed, str):
            damaged.append(DamagedLine(number, parsed, raw[:40]))
        else:
            yield number, parsed


def scan(path: Path) -> Scan:
    """Every line of a samples file sorted into records and damage."""
    damaged: list[DamagedLine] = []
    records = list(read_records(path, damaged))
    torn = None
    if samples_file_exists(path) and path.stat().st_size and not _ends_with_newline(path):
        torn = sum(1 for _ in iter_lines(path))
    return Scan(path=path, records=records, damaged=damaged, torn_tail=torn)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


_warned: set[tuple[str, tuple[int, ...]]] = set()


def warn_damaged(path: Path, damaged: list[DamagedLine]) -> None:
    """One warning per file and set of damaged lines (the same file read again says nothing new)."""
    if not damaged:
        return
    key = (str(path), tuple(d.line for d in damaged))
    if key in _warned:
        return
    _warned.add(key)
    shown = "; ".join(d.describe() for d in damaged[:3])
    more = f"; and {len(damaged) - 3} more" if len(damaged) > 3 else ""
    warnings.warn(
        DamagedLineWarning(
            f"{path}: skipped {len(damaged)} damaged line{'s' if len(damaged) > 1 else ''} ({shown}{more}); "
            f"the other lines are read. `ctxprobe check {path.parent}` lists them"
        ),
        stacklevel=3,
    )


def write_clean_copy(found: Scan, out: Path | None = None) -> Path:
    """The good lines of `found.path`, byte for byte and in order, written to `out` (default
    samples.clean.jsonl beside it) and fsynced; the original is never touched. Refuses to overwrite the
    original itself."""
    out = out or found.path.with_name(CLEAN_COPY)
    if out.resolve() == found.path.resolve():
        raise ValueError("a clean copy is never written over the original")
    keep = {number for number, _ in found.records}
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as dst:
        for number, raw, ended in iter_lines(found.path):
            if ended and number in keep:
                dst.write(raw + b"\n")
        dst.flush()
        os.fsync(dst.fileno())
    os.replace(tmp, out)
    return out
