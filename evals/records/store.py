"""A run folder on disk: manifest.json, samples.jsonl (one SampleRecord per line, flushed and fsynced
as each sample finishes, so a run killed at any moment loses no finished sample).

samples.jsonl is append-only: nothing ever rewrites or deletes a line. A sample sent again (after an
error, on resume) gets a new line, and the last line of an id is the one that counts."""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from ctxprobe.evals.records.lines import DamagedLine, read_records, samples_file_exists, warn_damaged
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.outline import RecordOutline
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.schema import versioned
from ctxprobe.evals.records.write_errors import WriteFailed
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
        """Replace manifest.json atomically (a reader sees the old or the new one); `WriteFailed` when the
        folder cannot be written."""
        data = manifest.model_dump(mode="json") if isinstance(manifest, BaseModel) else manifest
        tmp = self.dir / f".{MANIFEST}.tmp"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, self.dir / MANIFEST)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise WriteFailed(self.dir / MANIFEST, exc) from None

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

    def check_records_present(self, manifest: RunManifest) -> None:
        """A manifest that counts finished samples beside no samples file: the records were lost or left
        out of a copy, which is said in one line rather than shown as a run with nothing done."""
        counted = (manifest.samples_done or 0) + (manifest.samples_errored or 0)
        if counted and not samples_file_exists(self.samples_path):
            raise UserError(
                f"{self.dir} has no {SAMPLES}, though its manifest counts {counted:,} finished samples: "
                "the records are missing (a copy that left them out?)"
            )

    def records(self, *, needles: bool = True) -> Iterator[SampleRecord]:
        """Every complete record (without needles: as `RecordOutline`s, see `evals/records/outline.py`). A torn last line (a kill during a write) is skipped; so is a damaged line
        anywhere (blank, NULs, not UTF-8, not a record), named once in a `DamagedLineWarning` (see
        `evals/records/lines.py`): one bad line never makes the run unreadable."""
        damaged: list[DamagedLine] = []
        model = SampleRecord if needles else RecordOutline
        for _, record in read_records(self.samples_path, damaged, model):
            yield record
        warn_damaged(self.samples_path, damaged)

    def latest_records(self, *, needles: bool = True) -> dict[str, SampleRecord]:
        """One record per sample id: the last one written (without needles: its outline)."""
        return {r.sample.sample_id: r for r in self.records(needles=needles)}

    def append(self, record: SampleRecord) -> None:
        """Append one record as a line, flushed and fsynced; `WriteFailed` when it cannot be written (the
        lines before it stay as they are)."""
        try:
            if self._fh is None:
                self.dir.mkdir(parents=True, exist_ok=True)
                self._cut_torn_tail()
                self._fh = self.samples_path.open("a", encoding="utf-8")
            self._fh.write(record_line(record))
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            self._drop_handle()
            raise WriteFailed(self.samples_path, exc) from None

    def _drop_handle(self) -> None:
        """Forget a handle whose write failed (what it still buffers is a torn line, never a record)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None

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


def record_line(record: SampleRecord) -> str:
    """One JSON line. A lone surrogate in an output (a server's JSON may say `\\ud800`) cannot be written
    as UTF-8: it becomes U+FFFD rather than ending the run."""
    try:
        return record.model_dump_json() + "\n"
    except PydanticSerializationError:
        text = json.dumps(record.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
        return re.sub("[\ud800-\udfff]", "\ufffd", text) + "\n"


def run_folder(results_dir: Path, label: str) -> Path:
    """A new, not yet existing folder `results_dir/<time>-<label>`; `results_dir` must be usable: a folder can
    be made in it (or in the nearest of its parents that exists), else one line and exit 2 now, not exit 4 when
    the run starts."""
    base = _base_name(results_dir, label)
    _check_writable(results_dir)
    return _free_name(base)


def _check_writable(results_dir: Path) -> None:
    """Make and remove a folder where the run's folder will go: the one test that holds for every refusal
    (no permission, a read-only filesystem, /proc, a folder root may not write), where `os.access` says yes
    to root."""
    import tempfile

    existing = next((p for p in (results_dir, *results_dir.absolute().parents) if _exists(p)), Path("."))
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".ctxprobe-probe-", dir=existing))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(
            f"results folder {results_dir}: no folder can be made in {existing} ({reason}); "
            "give a writable --results-dir"
        ) from None


def claim_run_folder(results_dir: Path, label: str) -> Path:
    """A new folder `results_dir/<time>-<label>[-N]`, made here: `mkdir` is atomic, so two runs started in the
    same second with the same label get two folders (the second takes the next suffix), never one."""
    base = _base_name(results_dir, label)
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(results_dir, exc) from None
    for n in range(1, 10_000):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise WriteFailed(path, exc) from None
    raise UserError(f"no free run folder name left for {base}")


LABEL_IN_NAME = 80  # characters of the label a folder name keeps (file names are limited to 255 bytes)


def _base_name(results_dir: Path, label: str) -> Path:
    existing = Path(".")
    for parent in (results_dir, *results_dir.parents):
        if _exists(parent):
            if not parent.is_dir():
                raise UserError(f"results folder {results_dir} cannot be made: {parent} is a file")
            existing = parent
            break
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-")[:LABEL_IN_NAME].strip("-.")
    base = results_dir / (f"{stamp}-{safe}" if safe else stamp)
    _check_name_lengths(base, existing)
    return base


def _exists(path: Path) -> bool:
    """Whether `path` exists; a name the filesystem refuses to look up (too long) does not."""
    try:
        return path.exists()
    except OSError:
        return False


RUN_FILE_ROOM = 40  # the longest name ctxprobe writes inside a run folder, with a temporary suffix


def _check_name_lengths(folder: Path, existing: Path) -> None:
    """Refuse a folder name the filesystem would refuse (`File name too long`) before anything is made: each
    name in the path within the filesystem's NAME_MAX, the whole with a run's files within its PATH_MAX."""

    def limit(name: str, default: int) -> int:
        try:
            return int(os.pathconf(existing, name))
        except (OSError, ValueError):
            return default

    name_max, path_max = limit("PC_NAME_MAX", 255), limit("PC_PATH_MAX", 4096)
    for part in folder.parts:
        size = len(os.fsencode(part))
        if size > name_max:
            shown = part if len(part) <= 40 else part[:37] + "..."
            raise UserError(
                f"results folder {shown!r}: its name is {size} bytes, more than the {name_max} this "
                "filesystem allows; give a shorter --results-dir"
            )
    size = len(os.fsencode(str(folder.absolute()))) + RUN_FILE_ROOM
    if size > path_max:
        raise UserError(
            f"results folder {str(folder)[:40]}...: its path and a run's files would be {size} bytes, "
            f"more than the {path_max} this filesystem allows; give a shorter --results-dir"
        )


def _free_name(base: Path) -> Path:
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path
