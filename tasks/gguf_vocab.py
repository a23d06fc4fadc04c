"""The tokenizer fields of a GGUF file (`tokenizer.ggml.*`), read straight from its header.

Only the key-value section at the head of the file is read; the tensors are never touched. The `gguf`
package's reader parses every field and tensor into numpy views first, which takes about 8 s for a
262K-token vocabulary on a 2-core machine; this reads the same fields in about 0.15 s. Format: magic
`GGUF`, version, tensor count and key-value count, then each key (a length-prefixed string), a value type
and the value (scalars little-endian; strings length-prefixed UTF-8; arrays of one element type)."""

from __future__ import annotations

import hashlib
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ctxprobe.tasks.errors import UserError

_MAGIC = b"GGUF"
_STRING, _ARRAY = 8, 9
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_ARRAY_DTYPES = {
    0: "<u1",
    1: "<i1",
    2: "<u2",
    3: "<i2",
    4: "<u4",
    5: "<i4",
    6: "<f4",
    7: "<u1",
    10: "<u8",
    11: "<i8",
    12: "<f8",
}

# llama.cpp's token types (tokenizer.ggml.token_type)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class GGUFVocab:
    """A GGUF's vocabulary: the tokenizer kind (`llama` is SentencePiece-style, `gpt2` byte-level BPE),
    each token's text, score and type, and how prompts are framed."""

    model: str
    pre: str
    tokens: list[str]
    scores: np.ndarray
    types: np.ndarray
    bos_id: int | None
    add_bos: bool
    add_space_prefix: bool

    @property
    def digest(self) -> str:
        """A hash of everything that decides how text is split: equal digests, equal token ids."""
        h = hashlib.sha256(f"{self.model}|{self.pre}|{self.add_space_prefix}|".encode())
        h.update("\x00".join(self.tokens).encode("utf-8", "surrogatepass"))
        h.update(np.ascontiguousarray(self.scores, dtype="<f4").tobytes())
        h.update(np.ascontiguousarray(self.types, dtype="<i4").tobytes())
        return h.hexdigest()


class _Reader:
    def __init__(self, buf: memoryview) -> None:
        self.buf, self.off = buf, 0

    def unpack(self, fmt: str) -> Any:
        values = struct.unpack_from(fmt, self.buf, self.off)
        self.off += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        n = self.unpack("<Q")
        raw = bytes(self.buf[self.off : self.off + n])
        self.off += n
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int) -> Any:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, n = self.unpack("<IQ")
            if item == _STRING:
                return [self.string() for _ in range(n)]
            if item not in _ARRAY_DTYPES:
                raise ValueError(f"array of value type {item}")
            dtype = np.dtype(_ARRAY_DTYPES[item])
            array = np.frombuffer(self.buf, dtype=dtype, count=n, offset=self.off).copy()
            self.off += dtype.itemsize * n
            return array
        if kind not in _SCALARS:
            raise ValueError(f"value type {kind}")
        return self.unpack(_SCALARS[kind])


def read_metadata(path: Path) -> dict[str, Any]:
    """Every key-value pair of the GGUF's header (not the tensors)."""
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            buf = memoryview(mapped)
            try:
                if bytes(buf[:4]) != _MAGIC:
                    raise UserError(f"{path} is not a GGUF file")
                reader = _Reader(buf)
                reader.off = 8  # magic, version
                _, n_kv = reader.unpack("<QQ")
                out: dict[str, Any] = {}
                for _ in range(n_kv):
                    key = reader.string()
                    out[key] = reader.value(reader.unpack("<I"))
                return out
            finally:
                buf.release()
    except (struct.error, ValueError, OSError) as err:
        if isinstance(err, OSError) and not path.is_file():
            raise UserError(f"GGUF file not found: {path}") from None
        raise UserError(f"{path} is not a readable GGUF file ({err})") from None


def trained_context(path: Path) -> int | None:
    """The context length the model was trained for, as the GGUF states it (`<architecture>.context_length`)."""
    meta = read_metadata(path)
    value = meta.get(f"{meta.get('general.architecture')}.context_length")
    return value if isinstance(value, int) and value > 0 else None


def read_vocab(path: Path) -> GGUFVocab:
    meta = read_metadata(path)
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not tokens:
        raise UserError(f"{path} holds no tokenizer vocabulary (tokenizer.ggml.tokens)")
    n = len(tokens)
    scores = meta.get("tokenizer.ggml.scores", np.zeros(n, dtype=np.float32))
    types = meta.get("tokenizer.ggml.token_type", np.full(n, NORMAL, dtype=np.int32))
    bos = meta.get("tokenizer.ggml.bos_token_id")
    return GGUFVocab(
        model=str(meta.get("tokenizer.ggml.model", "")),
        pre=str(meta.get("tokenizer.ggml.pre", "default")),
        tokens=tokens,
        scores=np.asarray(scores, dtype=np.float32),
        types=np.asarray(types, dtype=np.int32),
        bos_id=int(bos) if bos is not None else None,
        add_bos=bool(meta.get("tokenizer.ggml.add_bos_token", True)),
        add_space_prefix=bool(meta.get("tokenizer.ggml.add_space_prefix", True)),
    )
