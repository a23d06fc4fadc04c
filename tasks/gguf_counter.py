"""The tokenizer inside a GGUF file, for exact token counts of the model a GGUF holds."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Sequence

import numpy as np

_QUIET: list[object] = []  # keeps the C callback alive


def _quiet_llama_logs() -> None:
    """llama.cpp logs to stderr even for a vocab-only load; a token counter should print nothing."""
    if _QUIET:
        return
    import ctypes

    import llama_cpp

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def quiet(level: int, text: bytes, user_data: object) -> None:
        return None

    llama_cpp.llama_log_set(quiet, ctypes.c_void_p(0))
    _QUIET.append(quiet)


class GGUFCounter:
    """The tokenizer inside a GGUF file, loaded vocab-only (no weights) through llama-cpp-python.

    Each text's count is its own, as if tokenized alone. For a SentencePiece vocabulary without a space
    prefix (Gemma's), texts are tokenized joined, about 256 KB per native call, and the tokens are split
    back at the texts' byte boundaries (a token's bytes are its piece's). Merges never cross a boundary
    that no token spans, so each side merges as it would alone; the texts on either side of a boundary
    that a token does span are counted alone. Other vocabularies count each text alone."""

    approximate = False
    chunk_bytes = 1 << 18

    def __init__(self, path: Path) -> None:
        import llama_cpp

        _quiet_llama_logs()
        self.spec = f"local:{path}"
        self._lib = llama_cpp
        self._llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        self._vocab = llama_cpp.llama_model_get_vocab(self._llama.model)
        meta = self._llama.metadata
        add_bos = str(meta.get("tokenizer.ggml.add_bos_token", "true")).lower() == "true"
        self.bos_tokens = 1 if add_bos else 0
        self.identity = meta.get("tokenizer.ggml.model", "")
        space_prefix = str(meta.get("tokenizer.ggml.add_space_prefix", "true")).lower() == "true"
        self._joinable = self.identity == "llama" and not space_prefix
        self._piece_bytes = np.full(llama_cpp.llama_vocab_n_tokens(self._vocab), -1, dtype=np.int64)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        data = [t.encode("utf-8") for t in texts]
        if not self._joinable:
            return [self._tokenize(d)[0] for d in data]
        counts: list[int] = []
        start = 0
        while start < len(data):
            stop, size = start + 1, len(data[start])
            while stop < len(data) and size + len(data[stop]) <= self.chunk_bytes:
                size += len(data[stop])
                stop += 1
            counts.extend(self._count_joined(data[start:stop]))
            start = stop
        return counts

    def _count_joined(self, parts: list[bytes]) -> list[int]:
        n, tokens = self._tokenize(b"".join(parts))
        if len(parts) == 1:
            return [n]
        ids = np.ctypeslib.as_array(tokens)[:n]
        ends = np.cumsum(self._pieces(ids))  # the byte offset where each token ends
        bounds = np.cumsum([len(p) for p in parts])
        if n == 0 or ends[-1] != bounds[-1]:
            return [self._tokenize(p)[0] for p in parts]
        last = np.minimum(np.searchsorted(ends, bounds), n - 1)  # the token ending at or after each text's end
        counts = np.diff(last, prepend=-1)
        spanned = np.flatnonzero(ends[last] != bounds)  # a token runs on past the end of text k
        for k in {*spanned.tolist(), *(spanned + 1).tolist()} - {len(parts)}:
            counts[k] = self._tokenize(parts[k])[0]
        return [int(c) for c in counts]

    def _tokenize(self, data: bytes) -> tuple[int, ctypes.Array[ctypes.c_int32]]:
        """One native pass: the token count and the tokens. (Llama.tokenize sizes its first buffer by the
        training context, 0 for a vocab-only model, so it runs the tokenizer twice on every text.)"""
        lib = self._lib
        tokens = (lib.llama_token * (len(data) + 8))()
        n = int(lib.llama_tokenize(self._vocab, data, len(data), tokens, len(tokens), False, False))
        if n < 0:  # more tokens than bytes (+8): only through added or special tokens
            tokens = (lib.llama_token * -n)()
            n = int(lib.llama_tokenize(self._vocab, data, len(data), tokens, len(tokens), False, False))
        return n, tokens

    def _pieces(self, ids: np.ndarray) -> np.ndarray:
        """Bytes of each token's piece, looked up once per token id."""
        lib = self._lib
        for token in np.unique(ids[self._piece_bytes[ids] < 0]).tolist():
            n = lib.llama_token_to_piece(self._vocab, token, ctypes.create_string_buffer(64), 64, 0, False)
            if n < 0:  # a piece longer than 64 bytes: -n is its length
                n = lib.llama_token_to_piece(self._vocab, token, ctypes.create_string_buffer(-n), -n, 0, False)
            self._piece_bytes[token] = n
        return self._piece_bytes[ids]
