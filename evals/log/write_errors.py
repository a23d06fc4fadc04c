"""A run file that cannot be written (disk full, read-only file system, no permission, quota) is not a
sample error and not bad input: the run stops at once with a code of its own, every line written so far
stays as it is (at most the one being written is torn, and every reader skips that), and the folder
can be copied where there is room and resumed there."""

from __future__ import annotations

import errno
import os
from pathlib import Path

WRITE_FAILED_EXIT = 4  # the exit code of a run (or any command) that could not write its files


class WriteFailed(Exception):
    """Writing `path` failed with `error` (an OSError from the file system)."""

    exit_code = WRITE_FAILED_EXIT

    def __init__(self, path: Path, error: OSError) -> None:
        self.path = Path(path)
        self.error = error
        name = errno.errorcode.get(error.errno or 0, "")
        self.reason = f"{error.strerror or error}" + (f" ({name})" if name else "")
        super().__init__(f"cannot write {self.path}: {self.reason}")


def writable(folder: Path) -> bool:
    """Whether new files can be made in `folder` (readers use it to skip the files they would refresh)."""
    return os.access(folder, os.W_OK | os.X_OK)
