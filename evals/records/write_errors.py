"""A run file that cannot be written (disk full, read-only file system, no permission, quota) is not a
sample error and not bad input: the run stops at once with a code of its own, every line written so far
stays as it is (at most the one being written is torn, and every reader skips that), and the folder
can be copied where there is room and resumed there.

A full disk would also refuse the manifest that says so; a run therefore keeps a small reserve file in its
folder while it writes, and gives that space back to write its final manifest."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from ctxprobe.tasks.errors import ExitError
from ctxprobe.tasks.exit_codes import ExitCode

WRITE_FAILED_EXIT = ExitCode.WRITE_FAILED  # the exit code of a run (or any command) that could not write its files


class WriteFailed(ExitError):
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


RESERVE = ".space-reserve"
RESERVE_BYTES = 64 * 1024  # ample for a final manifest (a few KB)


@contextlib.contextmanager
def space_reserve(folder: Path, size: int = RESERVE_BYTES) -> Iterator[Callable[[], None]]:
    """Hold `size` bytes of disk in `folder` while the block runs; the function it gives frees them (to write
    a manifest on a disk that filled). Removed at the end in any case."""
    path = Path(folder) / RESERVE
    try:
        with path.open("wb") as fh:
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        raise WriteFailed(path, exc) from None

    def release() -> None:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)

    try:
        yield release
    finally:
        release()
