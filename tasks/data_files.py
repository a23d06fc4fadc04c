"""The data files a user hands a family (`--qa hf:PATH`, `--mrcr hf:PATH`, a suite's `dataset:`): a regular file
or a folder, checked by `stat` before anything opens it, and parquet read so that any file pyarrow cannot read
is one line. A FIFO would block the open for ever, a link to /dev/zero would be read for ever, and an empty or
torn parquet file raises pyarrow's own errors: each is refused here, by name, before a request is sent."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from ctxprobe.tasks.errors import UserError


def data_path(path: Path, where: str) -> Path:
    """`path` when it is a regular file or a folder (links followed); else one UserError starting `where`."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UserError(f"{where}: no such file or folder") from None
    except OSError as error:
        raise UserError(f"{where}: cannot read it: {error.strerror or error}") from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UserError(f"{where}: not a regular file or folder (a pipe, a device or a socket is never read)")
    return path


def parquet_files(path: Path, where: str) -> list[Path]:
    """The .parquet files at `path`: itself, or those under the folder (each a regular file)."""
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise UserError(f"{where}: the folder holds no .parquet files")
    for file in files:
        data_path(file, f"{where}: {file}")
    return files


def parquet_rows(files: list[Path], where: str) -> list[dict[str, Any]]:
    """Every row of `files`; a file that is empty, torn or not parquet at all is one line naming it."""
    import pyarrow
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            rows += pq.read_table(file).to_pylist()
        except (OSError, ValueError, pyarrow.ArrowException) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise UserError(f"{where}: cannot read {file.name} as parquet: {first}") from None
    return rows
