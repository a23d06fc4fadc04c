"""Token counts of haystack units, counted once per (tokenizer, haystack) and kept on disk.

A prompt's length is the sum of the counts of its parts, so building a 1M-token prompt never
re-tokenizes the prompt: the first build counts each unit once (one tokenizer pass), later builds
only read the cached counts.

Counts are kept in spans of consecutive units, each starting where a prompt's haystack window starts: a
seed's window (`seed_window`) can start billions of units in (`--seed 20261201`), and nothing before it is
ever counted. Spans that grow into each other are joined. The files are bounded: see `count_cache_prune`.
Builds run on several threads at once: growing a span is one thread at a time (arrays are replaced,
never changed in place, so a reader holding the previous ones sees a correct prefix)."""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ctxprobe.tasks.cache_folder import cache_dir
from ctxprobe.tasks.count_cache_prune import prune
from ctxprobe.tasks.haystack import Haystack
from ctxprobe.tasks.token_counter import TokenCounter, fingerprint

LOOKAHEAD = 512  # units the assembler's last-gap fill may look at past the budget
FIRST_LOOKAHEAD = 16  # units counted past the budget at first; the fill asks for more only when it looks further
TEXTS_KEPT = 4096  # counts of prompt pieces kept (instructions, questions, needles), the oldest dropped first
TEXT_KEPT_CHARS = 64 * 1024  # a longer piece is counted each time it is asked for (the kept counts stay small)
_FIRST_GUESS = 20.0  # tokens per unit before anything is counted


@dataclass(frozen=True)
class Span:
    """The counts of units `start`, `start + 1`, ...; `cumsum[i]` is the tokens in units [start, start + i)."""

    start: int
    counts: np.ndarray
    cumsum: np.ndarray


class UnitCounts:
    """Token counts of a haystack's units, in spans grown on demand and persisted."""

    def __init__(self, haystack: Haystack, counter: TokenCounter, root: Path | None = None) -> None:
        self.haystack = haystack
        self.counter = counter
        self.folder = (root or cache_dir()) / "counts"
        self.path = self.folder / f"{fingerprint(counter)}-{haystack.fingerprint[:24]}.counts.npz"
        self._spans: dict[int, np.ndarray] = _load(self.path)
        self._cumsums: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()  # spans grow one thread at a time
        self._texts: dict[str, int] = {}
        self._texts_lock = threading.Lock()

    @property
    def counts(self) -> np.ndarray:
        """The counts of the span starting at unit 0 (empty before anything there is counted)."""
        return self._spans.get(0, np.zeros(0, dtype=np.int32))

    @property
    def cumsum(self) -> np.ndarray:
        """cumsum[i] = tokens in units [0, i)."""
        return self._cumsum(0)

    def ensure_tokens(self, tokens: int, lookahead: int = LOOKAHEAD, start: int = 0) -> None:
        """Count units until those from unit `start` on total `tokens`, plus `lookahead` units past that
        point (the assembler may use a few of them to fill the last gap)."""
        self.span(start, tokens, lookahead)

    def span(self, start: int, tokens: int, lookahead: int = LOOKAHEAD) -> Span:
        """The counts from unit `start` on, far enough to total `tokens` with `lookahead` units to spare."""
        with self._lock:
            at = self._span_holding(start)
            grown = False
            while True:
                counts, cum = self._spans[at], self._cumsum(at)
                goal = int(cum[start - at]) + tokens
                within = int(np.searchsorted(cum, goal, side="right"))
                if int(cum[-1]) >= goal and len(counts) - within >= lookahead:
                    break
                per_unit = max(float(cum[-1]) / len(counts) if len(counts) else _FIRST_GUESS, 1.0)
                self._grow(at, int(max(0, goal - int(cum[-1])) / per_unit * 1.02) + lookahead)
                grown = True
            if grown and not self.counter.approximate:
                self._save()
            offset = start - at
            return Span(
                start=start,
                counts=self._spans[at][offset:],
                cumsum=self._cumsum(at)[offset:] - self._cumsum(at)[offset],
            )

    def count_texts(self, texts: list[str]) -> list[int]:
        """Counts of the pieces of a prompt around its units (its instruction, question and needles), each
        counted once and remembered in memory: every prompt of a task shares its instruction, and a depth
        sweep its first unit. The counter gives one count for one text, so a remembered count is the count."""
        with self._texts_lock:
            known = {t: self._texts[t] for t in texts if t in self._texts}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            counted = dict(zip(todo, self.counter.count_many(todo)))
            known.update(counted)
            with self._texts_lock:
                self._texts.update((t, n) for t, n in counted.items() if len(t) <= TEXT_KEPT_CHARS)
                for old in list(self._texts)[: max(0, len(self._texts) - TEXTS_KEPT)]:
                    del self._texts[old]
        return [known[t] for t in texts]

    def _span_holding(self, start: int) -> int:
        """The start of the span that holds (or ends right at) unit `start`; a new empty one if none does."""
        starts = sorted(self._spans)
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and start <= starts[i] + len(self._spans[starts[i]]):
            return starts[i]
        self._spans[start] = np.zeros(0, dtype=np.int32)
        self._cumsums.pop(start, None)
        return start

    def _grow(self, at: int, n: int) -> None:
        """Count `n` more units at the end of the span at `at`, joining the next span when it reaches it."""
        end = at + len(self._spans[at])
        later = [s for s in self._spans if s > at]
        following = min(later) if later else None
        stop = end + n if following is None else min(end + n, following)
        new = np.asarray(self.counter.count_many(self.haystack.units(end, stop)), dtype=np.int32)
        parts = [self._spans[at], new]
        if following is not None and stop >= following:
            parts.append(self._spans.pop(following))  # grown into the next span: one span now
            self._cumsums.pop(following, None)
        self._spans[at] = np.concatenate(parts)
        self._cumsums.pop(at, None)

    def _cumsum(self, at: int) -> np.ndarray:
        if at not in self._cumsums:
            counts = self._spans.get(at, np.zeros(0, dtype=np.int32))
            self._cumsums[at] = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
        return self._cumsums[at]

    def _save(self) -> None:
        """Write every span atomically (a concurrent reader sees the old or the new file); a cache folder that
        cannot be written only costs recounting next time."""
        starts = sorted(self._spans)
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp.npz")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            np.savez(
                tmp,
                starts=np.asarray(starts, dtype=np.int64),
                sizes=np.asarray([len(self._spans[s]) for s in starts], dtype=np.int64),
                counts=np.concatenate([self._spans[s] for s in starts]) if starts else np.zeros(0, np.int32),
            )
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            return
        prune(self.folder, keep=self.path)


def _load(path: Path) -> dict[int, np.ndarray]:
    """The spans of a counts file; none when it is missing or unreadable (it is only a cache)."""
    try:
        with np.load(path) as data:
            starts, sizes, counts = data["starts"], data["sizes"], data["counts"]
        os.utime(path)  # recently used: the last to be pruned
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return {}
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    return {int(s): counts[bounds[i] : bounds[i + 1]].astype(np.int32) for i, s in enumerate(starts)}
