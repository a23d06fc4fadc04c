"""The count cache stays bounded. Each (tokenizer, haystack) pair has one counts file, and a nightly job that
reads a fresh `file:`/`dir:` haystack, or a server whose tokenizer changes, makes a new pair every run: left
alone the folder grows a file per run. After each write the least recently used files are removed until
at most `CTXPROBE_COUNT_CACHE_FILES` files (default 64) and `CTXPROBE_COUNT_CACHE_MB` megabytes (default
512) remain, and temporary files a killed writer left behind are removed once they are an hour old.
Removing a counts file only costs counting its units again."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

DEFAULT_FILES = 64
DEFAULT_MB = 512.0
STALE_TMP_S = 3600.0


def limits() -> tuple[int, float]:
    """The bounds in force: (files, megabytes), from the environment or the defaults."""

    def read(name: str, default: float) -> float:
        with contextlib.suppress(ValueError):
            value = float(os.environ.get(name, default))
            if value > 0:
                return value
        return default

    return int(read("CTXPROBE_COUNT_CACHE_FILES", DEFAULT_FILES)), read("CTXPROBE_COUNT_CACHE_MB", DEFAULT_MB)


def prune(folder: Path, keep: Path | None = None, now: float | None = None) -> list[Path]:
    """Remove stale temporary files and the least recently used counts files beyond the bounds (never
    `keep`, the file just written). Returns what was removed; a file another process removed first is fine."""
    now = time.time() if now is None else now
    max_files, max_mb = limits()
    removed: list[Path] = []
    entries: list[tuple[float, int, Path]] = []
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            with contextlib.suppress(OSError):
                stat = path.stat()
                if ".tmp." in path.name:
                    if now - stat.st_mtime > STALE_TMP_S and _unlink(path):
                        removed.append(path)
                elif path.suffix in (".npz", ".npy"):  # .npy: counts files of earlier versions
                    entries.append((stat.st_mtime, stat.st_size, path))
    entries.sort(key=lambda e: e[0])  # oldest use first
    total = sum(size for _, size, _ in entries)
    count = len(entries)
    for _, size, path in entries:
        if count <= max_files and total <= max_mb * 1e6:
            break
        if keep is not None and path == keep:
            continue
        if _unlink(path):
            removed.append(path)
        count -= 1
        total -= size
    return removed


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False
