"""The count cache counts from a window's start, never every unit before it (`--seed 20261201` counted
billions of units), gives the same prompt however its spans were grown, and stays bounded on disk."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ctxprobe.tasks import count_cache_prune
from ctxprobe.tasks.build import PromptBuilder
from ctxprobe.tasks.count_cache import UnitCounts
from ctxprobe.tasks.haystack import make_haystack
from ctxprobe.tasks.sample import seed_window


class WordCounter:
    """An exact (non-approximate) counter: one token per word, and a tally of the units it was asked about."""

    spec = "test:words"
    approximate = False
    bos_tokens = 1

    def __init__(self) -> None:
        self.units_counted = 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.units_counted += len(texts)
        return [len(t.split()) for t in texts]

    def token_ids(self, text: str) -> list[int]:
        return [len(w) for w in text.split()]


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _build(seed: int, length: int = 2048, counter: WordCounter | None = None) -> tuple[str, int]:
    counter = counter or WordCounter()
    builder = PromptBuilder(counter)
    sample = builder.build(
        builder.recipe(family="niah", haystack="prose", context_tokens=length, depth=50.0, seed=seed)
    )
    return sample.prompt_sha256, counter.units_counted


def test_a_huge_seed_counts_from_its_window_not_from_unit_zero() -> None:
    started = time.perf_counter()
    _, counted = _build(20261201)
    assert seed_window(20261201, 2048) == 20261201 * 256  # 5.2 billion units in
    assert counted < 3_000 and time.perf_counter() - started < 10  # about one prompt's units, not 5.2e9


def test_the_prompt_is_the_same_however_the_spans_grew(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = {seed: _build(seed)[0] for seed in (0, 3, 4)}  # each in a cache of its own
    for seed in (0, 3, 4):
        for path in cache.glob("counts/*"):
            path.unlink()
        assert _build(seed)[0] == fresh[seed]
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path / "shared"))
    counter = WordCounter()
    assert [_build(s, counter=counter)[0] for s in (4, 0, 3)] == [fresh[4], fresh[0], fresh[3]]
    counts = UnitCounts(make_haystack("prose"), counter)
    assert sorted(counts._spans) == [0, 768, 1024]  # each window counted as far as its prompt looked, no further
    before = counter.units_counted
    assert [_build(s, counter=counter)[0] for s in (0, 3, 4)] == [fresh[0], fresh[3], fresh[4]]
    assert counter.units_counted - before < 100  # read back from disk: only the question and needles counted


def test_a_window_that_grows_into_the_next_span_joins_it_and_builds_the_same_prompt(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def build(window: int, counter: WordCounter) -> str:
        builder = PromptBuilder(counter)
        return builder.build(builder.recipe(family="niah", haystack="prose", context_tokens=2048, window=window)).prompt

    fresh = build(40, WordCounter())
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path / "shared"))
    counter = WordCounter()
    build(100, counter)
    assert build(40, counter) == fresh  # counted from 40 up to 100, then read on in the span from 100
    assert sorted(UnitCounts(make_haystack("prose"), counter)._spans) == [40]  # one span: 40 grew into 100


def test_span_counts_match_a_direct_count() -> None:
    counter = WordCounter()
    hay = make_haystack("prose")
    counts = UnitCounts(hay, counter)
    span = counts.span(1_000_000, 500)
    direct = [len(t.split()) for t in hay.units(1_000_000, 1_000_000 + len(span.counts))]
    assert list(span.counts) == direct and span.cumsum[-1] == sum(direct) and span.cumsum[0] == 0
    assert span.cumsum[-1] >= 500 and counter.units_counted == len(span.counts)


def test_the_cache_folder_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "counts"
    folder.mkdir()
    now = time.time()
    for i in range(70):
        path = folder / f"tok-{i:02d}.counts.npz"
        np.savez(path, starts=np.zeros(1), sizes=np.zeros(1), counts=np.zeros(1000, np.int32))
        os.utime(path, (now - 1000 + i, now - 1000 + i))
    (folder / "old.counts.npz.123.tmp.npz").write_bytes(b"x")
    os.utime(folder / "old.counts.npz.123.tmp.npz", (now - 7200, now - 7200))
    (folder / "fresh.counts.npz.456.tmp.npz").write_bytes(b"x")  # a writer still at work: left alone
    keep = folder / "tok-00.counts.npz"  # the oldest, but just written
    removed = count_cache_prune.prune(folder, keep=keep, now=now)
    left = sorted(p.name for p in folder.iterdir())
    assert len([n for n in left if ".tmp." not in n]) == 64 and keep.name in left
    assert "tok-69.counts.npz" in left and "tok-01.counts.npz" not in left and "tok-07.counts.npz" in left
    assert "old.counts.npz.123.tmp.npz" not in left and "fresh.counts.npz.456.tmp.npz" in left
    assert len(removed) == 7
    monkeypatch.setenv("CTXPROBE_COUNT_CACHE_MB", "0.02")  # ~5 files of 4 KB
    count_cache_prune.prune(folder, now=now)
    sizes = sum(p.stat().st_size for p in folder.glob("*.counts.npz"))
    assert sizes <= 0.02e6 and (folder / "tok-69.counts.npz").exists()


def test_runs_leave_one_counts_file_per_tokenizer_and_haystack(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXPROBE_COUNT_CACHE_FILES", "3")
    for hay in ("prose", "code", "legal", "noise", "prose"):  # five "runs", four haystacks
        counter = WordCounter()
        builder = PromptBuilder(counter)
        builder.build(builder.recipe(family="niah", haystack=hay, context_tokens=1024, seed=7))
    assert len(list((cache / "counts").iterdir())) == 3


def test_an_unwritable_cache_folder_costs_only_recounting(cache: Path) -> None:
    cache.mkdir()
    (cache / "counts").write_text("a file where the folder should be")
    assert _build(5)[0] == _build(5)[0]


class TextCounter(WordCounter):
    """A WordCounter that keeps every text it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.texts.extend(texts)
        return super().count_many(texts)


def _sweep(builder: PromptBuilder, seed: int, length: int) -> list[str]:
    return [
        builder.build(
            builder.recipe(family="niah", haystack="prose", context_tokens=length, depth=float(d), seed=seed)
        ).prompt
        for d in range(0, 101, 10)
    ]


@pytest.mark.parametrize("length", [1024, 2048, 8192])
def test_a_sweep_counts_the_units_it_may_use_and_its_instruction_once(length: int) -> None:
    counter = TextCounter()
    builder = PromptBuilder(counter)
    prompts = _sweep(builder, 2, length)
    head = builder.build(builder.recipe(family="niah", haystack="prose", context_tokens=length, seed=2)).prompt[:60]
    assert sum(t.startswith(head) for t in counter.texts) == 1  # the instruction: counted once for 12 prompts
    units = UnitCounts(make_haystack("prose"), counter).span(seed_window(2, length), 0, 0)
    used = max(len(p.split()) for p in prompts)  # one token a word: the longest prompt's tokens
    fitting = int(np.searchsorted(units.cumsum, used, side="right"))  # units that fit in the longest prompt
    assert len(units.counts) - fitting < 100  # what the gap fill looked at, not LOOKAHEAD (512) units more
    assert len(set(counter.texts)) == len(counter.texts)  # nothing counted twice


def test_the_prompt_is_the_same_when_every_unit_of_the_lookahead_was_counted(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting only the units the gap fill looks at chooses the units a span counted LOOKAHEAD past the budget
    chooses (how spans were grown before, and how a counts file written then holds them)."""
    from ctxprobe.tasks.count_cache import LOOKAHEAD

    lazily = {
        (seed, length): _sweep(PromptBuilder(WordCounter()), seed, length) for seed in (0, 5) for length in (1024, 4096)
    }
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path / "counted-ahead"))
    builder = PromptBuilder(WordCounter())
    for seed, length in lazily:
        builder.unit_counts("prose").ensure_tokens(length, LOOKAHEAD, start=seed_window(seed, length))
        assert _sweep(builder, seed, length) == lazily[(seed, length)]
