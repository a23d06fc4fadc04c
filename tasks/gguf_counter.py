"""Exact token counts for the model a GGUF file holds, with no engine and no llama.cpp library: the GGUF's
own vocabulary turned into a `tokenizers` tokenizer that splits text as llama.cpp does.

llama.cpp's SentencePiece-style tokenizer (vocabulary kind `llama`: Gemma, Llama 2, Mistral) works so:
1. the text is cut at every control, user-defined or unknown token's text (longest first; `/tokenize` and
   completions parse special text), and those pieces become their tokens;
2. in the rest, spaces become `▁` (and one `▁` is put in front when the vocabulary asks for a space prefix);
3. starting from single characters, the adjacent pair whose joined text is a token with the highest score
   is merged, again and again;
4. a character that is no token is written as its UTF-8 bytes' `<0xNN>` tokens.

The same tokenizer in `tokenizers` terms: added tokens for step 1, a `Replace(" ", "▁")` normalizer for 2,
a BPE model for 3 whose merges are every split of every token into two tokens, ranked by the joined token's
score (which is what "highest score first" means), and BPE's byte fallback for 4. On Gemma 3's vocabulary
it gives the ids of llama-server's `/tokenize` on every built-in haystack (tests/e2e, marked `engine`).
One case cannot be carried over: where two merged tokens have the same score, llama.cpp takes the leftmost
pair, and a ranked merge list cannot say "leftmost". A vocabulary with such ties (Gemma's has none) gives
a counter marked approximate.

Building the merges takes a few seconds for a 262K vocabulary; the built tokenizer is kept in the cache
folder under a hash of the vocabulary, so later loads only read it back."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxprobe.tasks.cache_folder import cache_dir
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.gguf_vocab import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, GGUFVocab, read_vocab

SUPPORTED_KINDS = ("llama",)
BUILDER_VERSION = 1  # part of the cached file's name: bump it when spm_tokenizer changes what it builds


def spm_tokenizer(vocab: GGUFVocab) -> Any:
    """A `tokenizers.Tokenizer` that splits text as llama.cpp does for a `llama` (SentencePiece) vocabulary."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers

    ids: dict[str, int] = {}
    for i, text in enumerate(vocab.tokens):
        ids.setdefault(text, i)
    scores = vocab.scores.tolist()
    merges: list[tuple[str, str]] = []
    for i in sorted(range(len(vocab.tokens)), key=lambda i: -scores[i]):  # stable: ties keep vocabulary order
        piece = vocab.tokens[i]
        if ids[piece] != i:
            continue
        merges.extend((piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in ids and piece[k:] in ids)
    unk = next((vocab.tokens[i] for i in range(len(vocab.tokens)) if vocab.types[i] == UNKNOWN), None)
    tokenizer = Tokenizer(
        models.BPE(
            vocab=ids, merges=merges, byte_fallback=bool((vocab.types == BYTE).any()), unk_token=unk, fuse_unk=False
        )
    )
    steps: list[Any] = [normalizers.Prepend(" ")] if vocab.add_space_prefix else []
    tokenizer.normalizer = normalizers.Sequence([*steps, normalizers.Replace(" ", "\u2581")])
    special = [
        AddedToken(vocab.tokens[i], special=True, normalized=False)
        for i in range(len(vocab.tokens))
        if vocab.types[i] in (CONTROL, USER_DEFINED, UNKNOWN)
    ]
    tokenizer.add_special_tokens(special)
    return tokenizer


def has_score_ties(vocab: GGUFVocab) -> bool:
    """Whether two tokens that merging can form (normal, longer than one character) share a score."""
    formed = [i for i, text in enumerate(vocab.tokens) if len(text) > 1 and vocab.types[i] == NORMAL]
    return len(set(vocab.scores[formed].tolist())) < len(formed)


def load_tokenizer(vocab: GGUFVocab) -> Any:
    """The tokenizer for this vocabulary, built once and then read from the cache folder."""
    from tokenizers import Tokenizer

    path = cache_dir() / "tokenizers" / f"gguf-{vocab.digest[:24]}-v{BUILDER_VERSION}.json"
    if path.is_file():
        return Tokenizer.from_file(str(path))
    tokenizer = spm_tokenizer(vocab)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    tokenizer.save(str(tmp))
    os.replace(tmp, path)  # atomic: a concurrent first use reads a whole file or builds its own
    return tokenizer


def counts_offline(path: Path) -> bool:
    """Whether this GGUF's vocabulary is one the GGUFCounter rebuilds (else count with the engine)."""
    return read_vocab(path).model in SUPPORTED_KINDS


class GGUFCounter:
    """The tokenizer inside a GGUF file (vocabulary kind `llama`). Each text is counted as if tokenized
    alone, without BOS; `bos_tokens` is the BOS the engine puts before a completion prompt. Approximate
    only for a vocabulary with score ties (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        vocab = read_vocab(Path(path))
        if vocab.model not in SUPPORTED_KINDS:
            raise UserError(
                f"{path}: token counting offline supports SentencePiece-style GGUF vocabularies "
                f"(tokenizer.ggml.model 'llama'), not {vocab.model!r}; use --token-counter server "
                "(the engine's own /tokenize)"
            )
        self.spec = f"local:{path}"
        self.identity = f"gguf:{vocab.model}:{vocab.digest[:16]}"
        self.bos_tokens = 1 if vocab.add_bos and vocab.bos_id is not None else 0
        self.approximate = has_score_ties(vocab)
        self._tok = load_tokenizer(vocab)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encode = getattr(self._tok, "encode_batch_fast", self._tok.encode_batch)
        return [len(e.ids) for e in encode(list(texts), add_special_tokens=False)]

    def token_ids(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)
