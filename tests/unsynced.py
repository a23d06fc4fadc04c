"""Synthetic run folders are written through the real RunStore, which fsyncs every record so that a killed run
loses no finished sample. A test's fixture has nothing to lose: `unsynced()` leaves out the store's fsyncs while
it writes one (a nightly-sized folder is 3,696 records: ~15 s of syncing on a loaded machine's disk). What the
store writes, and how, is otherwise unchanged; the tests of its durability never use it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ctxprobe.evals.records import store as store_module


class _NoSync:
    """`os` for the run store, its fsync a no-op."""

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def fsync(self, fd: int) -> None:
        pass


@contextmanager
def unsynced() -> Iterator[None]:
    saved = store_module.os
    store_module.os = _NoSync()  # type: ignore[assignment]
    try:
        yield
    finally:
        store_module.os = saved
