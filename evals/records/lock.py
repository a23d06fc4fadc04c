"""One writer per run folder. Two processes appending to one samples.jsonl blend two runs into one (or send
every sample left twice, on two `--resume`s at once), so a writer holds an `fcntl` lock on the folder's
`.lock` file for as long as it writes, and a second writer is refused in one line naming the holder's pid.

The lock is the kernel's: it goes away with the process that held it, even after `kill -9`, so a stale
`.lock` file never blocks a resume. Readers (show, compare, report) take no lock and need no write access."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ctxprobe.evals.records.write_errors import WriteFailed
from ctxprobe.tasks.errors import UserError

LOCK = ".lock"


class FolderBusy(UserError):
    """Another process is writing this run folder."""


@contextlib.contextmanager
def writer_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run folder's writer lock while the block runs; `FolderBusy` when another process holds it,
    `WriteFailed` when the folder cannot be written at all."""
    path = Path(run_dir) / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise WriteFailed(path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise WriteFailed(path, exc) from None
            raise FolderBusy(
                f"{run_dir} is being written by another ctxprobe process (pid {_holder(fd)}); "
                "wait for it to end, or start a new run"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as exc:  # a full disk refuses even the pid
            raise WriteFailed(path, exc) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _holder(fd: int) -> str:
    """The pid the holder wrote into the lock file ('?' if it has not written it yet)."""
    with contextlib.suppress(OSError, ValueError):
        return str(int(os.pread(fd, 32, 0).decode().strip()))
    return "?"
