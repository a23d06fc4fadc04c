"""Token counts of haystack units, counted once per (tokenizer, haystack) and kept on disk.

A prompt's length is the sum of the counts of its parts, so building a 1M-token prompt never
re-tokenizes the prompt: the first build counts each unit once (one tokenizer pass), later builds
only read the cached array. Builds run on several threads at once: growing is one thread at a time
(the arrays only ever grow, so a reader holding the previous ones sees a correct prefix)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from ctxprobe.tasks.haystack import Haystack
from ctxprobe.tasks.token_counter import TokenCounter, cache_dir, fingerprint

LOOKAHEAD = 512  # units counted past the budget, for the assembler's last-gap fill


class UnitCounts:
    """Cumulative token counts of a haystack's first units, grown on demand and persisted."""

    def __init__(self, haystack: Haystack, counter: TokenCounter, root: Path | None = None) -> None:
        self.haystack = haystack
        self.counter = counter
        folder = (root or cache_dir()) / "counts"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{fingerprint(counter)}-{haystack.fingerprint[:24]}.npy"
        self.counts = np.load(self.path) if self.path.exists() else np.zeros(0, dtype=np.int32)
        self._cumsum = np.concatenate(([0], np.cumsum(self.counts, dtype=np.int64)))
        self._grow = threading.Lock()

    @property
    def cumsum(self) -> np.ndarray:
        """cumsum[i] = tokens in units [0, i)."""
        return self._cumsum

    def ensure_tokens(self, tokens: int, lookahead: int = LOOKAHEAD, start: int = 0) -> None:
        """Count units until those from unit `start` on total `tokens`, plus `lookahead` units past that
        point (the assembler may use a few of them to fill the last gap)."""
        with self._grow:
            self._ensure_tokens(tokens, lookahead, start)

    def _ensure_tokens(self, tokens: int, lookahead: int, start: int) -> None:
        grown = False
        while True:
            have_units = len(self.counts)
            have = int(self._cumsum[-1])
            per_unit = max(have / have_units if have_units else 20.0, 1.0)
            if have_units >= start:
                goal = int(self._cumsum[start]) + tokens
                within = int(np.searchsorted(self._cumsum, goal, side="right"))
                if have >= goal and have_units - within >= lookahead:
                    break
                missing = max(0, goal - have) / per_unit
            else:
                missing = start - have_units + tokens / per_unit
            n = int(missing * 1.02) + lookahead
            new = np.asarray(self.counter.count_many(self.haystack.units(have_units, have_units + n)), dtype=np.int32)
            self.counts = np.concatenate((self.counts, new))
            self._cumsum = np.concatenate((self._cumsum, self._cumsum[-1] + np.cumsum(new, dtype=np.int64)))
            grown = True
        if grown and not self.counter.approximate:
            tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npy")
            np.save(tmp, self.counts)
            os.replace(tmp, self.path)  # atomic: a concurrent reader sees the old or the new array
