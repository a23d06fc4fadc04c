"""The chat template's tokens, measured at the server that applies them, for a counter that counts
offline. A GGUF or tokenizer.json counts the prompt's text exactly, but it cannot know the template the
server wraps a chat message in: llama-server applies the GGUF's template, or, for a GGUF without one (a
base model such as the packaged Gemma 3 270M), its ChatML fallback, whose `<|im_start|>` markers are
plain text to Gemma's vocabulary (23 tokens around a message, BOS included). Without this a chat-mode
prompt was planned that many tokens short of what the server counts.

`with_chat_lead` keeps the offline counter for every count and asks the server once, through its
template-applying count call (docs/ENGINES.md), how many tokens the template adds around one message."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ctxprobe.runners.engines import known_engines
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.tasks.token_counter import TokenCounter


class ChatLeadCounter:
    """`counter` for every count and id; `chat_overhead` from `server`, measured once (None where the
    server cannot apply its template through a count call, as for the counter alone)."""

    def __init__(self, counter: TokenCounter, server: ServerTokenizer) -> None:
        self.counter = counter
        self.server = server
        self._lock = threading.Lock()
        self._overhead: tuple[int | None] | None = None

    @property
    def spec(self) -> str:
        return self.counter.spec

    @property
    def approximate(self) -> bool:
        return self.counter.approximate

    @property
    def bos_tokens(self) -> int:
        return self.counter.bos_tokens

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return self.counter.count_many(texts)

    def token_ids(self, text: str) -> list[int]:
        return self.counter.token_ids(text)

    def chat_overhead(self, content: str = "Hello.") -> int | None:
        with self._lock:
            if self._overhead is None:
                self._overhead = (self.server.chat_overhead(content),)
            return self._overhead[0]

    def chat_pair_overhead(self) -> int | None:
        return self.server.chat_pair_overhead()

    def __getattr__(self, name: str) -> object:  # what else the counter offers (count, identity, ...)
        if name == "counter":
            raise AttributeError(name)
        return getattr(self.counter, name)


def with_chat_lead(
    counter: TokenCounter,
    base_url: str | Sequence[str],
    engine: str,
    *,
    model: str | None = None,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    policy: RetryPolicy | None = None,
) -> TokenCounter:
    """`counter`, measuring the chat template at `base_url` (or the first of the replicas that answers) where
    it cannot itself (a server counter already does, and an engine without a known count call is left as it
    is)."""
    if callable(getattr(counter, "chat_overhead", None)) or engine not in known_engines():
        return counter
    server = ServerTokenizer(base_url, engine, model=model, concurrency=1, policy=policy, api_key_env=api_key_env)
    return ChatLeadCounter(counter, server)
