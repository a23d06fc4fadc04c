"""Exact token counts from the served model's own tokenizer, through each engine's tokenize call
(ENGINES.md): vLLM `POST /tokenize`, SGLang `POST /v1/tokenize`, llama-server `POST /tokenize`,
llama-cpp-python `POST /extras/tokenize/count`.

Counts are of the text alone, without BOS. llama-cpp-python's call always adds BOS (`adds_bos`), so its
answer is reduced by the count it gives for the empty text. `bos_tokens` is what the endpoint puts before a
completion prompt, for callers that plan a prompt's full length."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any

from ctxprobe.runners.http_json import DEFAULT_API_KEY_ENV, Unreachable, api_root, request_json
from ctxprobe.runners.probe import KNOWN_ENGINES, probe_engine
from ctxprobe.tasks.errors import UserError

_PATHS = {"vllm": "/tokenize", "sglang": "/v1/tokenize", "llama-server": "/tokenize",
          "llama-cpp-python": "/extras/tokenize/count"}


class ServerTokenizer:
    """A token counter backed by the endpoint (satisfies `tasks.token_counter.TokenCounter`)."""

    approximate = False

    def __init__(self, base_url: str, engine: str, *, model: str | None = None, concurrency: int = 8,
                 timeout_s: float = 300.0, api_key_env: str = DEFAULT_API_KEY_ENV) -> None:
        if engine not in _PATHS:
            raise UserError(f"no tokenize call known for engine {engine!r}; known: {', '.join(KNOWN_ENGINES)}")
        self.base_url = api_root(base_url)
        self.engine = engine
        self.model = model
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.api_key_env = api_key_env
        self.spec = f"server:{self.base_url}"
        self.identity = f"{engine}:{model or ''}"

    @property
    def adds_bos(self) -> bool:
        """Whether the engine's tokenize call counts a BOS of its own (llama-cpp-python: always)."""
        return self.engine == "llama-cpp-python" and self._call_bos > 0

    @cached_property
    def _call_bos(self) -> int:
        return self._raw_count("", special=True) if self.engine == "llama-cpp-python" else 0

    @cached_property
    def bos_tokens(self) -> int:
        """Special tokens the endpoint puts before a completion prompt (BOS), not part of a text count."""
        if self.engine == "llama-cpp-python":
            return self._call_bos
        return max(0, self._raw_count("", special=True) - self._raw_count("", special=False))

    def count(self, text: str) -> int:
        return self._raw_count(text, special=False) - self._call_bos

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts in the order given, at most `concurrency` requests at a time."""
        if len(texts) <= 1:
            return [self.count(t) for t in texts]
        self._call_bos  # noqa: B018 - resolve once before the threads start
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(texts))) as pool:
            return list(pool.map(self.count, texts))

    def chat_overhead(self, content: str = "Hello.") -> int | None:
        """Tokens the chat template adds around one user message (with the generation prompt), or None
        where the engine cannot apply its template through a tokenize call."""
        messages = [{"role": "user", "content": content}]
        if self.engine in ("vllm", "sglang"):
            body = self._post(_PATHS[self.engine], self._with_model({"messages": messages,
                                                                      "add_generation_prompt": True}), soft=True)
            total = body.get("count") if isinstance(body, dict) else None
        elif self.engine == "llama-server":
            body = self._post("/v1/chat/completions/input_tokens", self._with_model({"messages": messages}), soft=True)
            total = body.get("input_tokens") if isinstance(body, dict) else None
        else:
            return None
        return total - self.count(content) if isinstance(total, int) else None

    def _with_model(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.model, **payload} if self.model else payload

    def _raw_count(self, text: str, *, special: bool) -> int:
        if self.engine == "llama-cpp-python":
            value = self._post(_PATHS[self.engine], {"input": text}).get("count")
        elif self.engine == "llama-server":
            tokens = self._post("/tokenize", {"content": text, "add_special": special}).get("tokens")
            value = len(tokens) if isinstance(tokens, list) else None
        else:
            value = self._post(_PATHS[self.engine], self._with_model({"prompt": text,
                                                                      "add_special_tokens": special})).get("count")
        if not isinstance(value, int):
            raise UserError(f"tokenize call at {self.base_url} ({self.engine}) answered without a token count")
        return value

    def _post(self, path: str, payload: dict[str, Any], *, soft: bool = False) -> dict[str, Any]:
        try:
            status, body = request_json("POST", self.base_url + path, payload, timeout_s=self.timeout_s,
                                        api_key_env=self.api_key_env)
        except Unreachable as err:
            raise UserError(f"endpoint {self.base_url} is unreachable: {err}") from None
        if status == 200 and isinstance(body, dict):
            return body
        if soft:  # the engine cannot do it (no template, no route): not an error
            return {}
        raise UserError(f"tokenize call {path} at {self.base_url} ({self.engine}) failed with HTTP {status}: "
                        f"{str(body)[:300]}")


def server_token_counter(url: str, *, api_key_env: str = DEFAULT_API_KEY_ENV) -> ServerTokenizer:
    """Probe the endpoint and count with its tokenizer."""
    info = probe_engine(url, api_key_env=api_key_env)
    if info.engine == "unknown":
        raise UserError(f"endpoint {api_root(url)} is not a vLLM, SGLang, llama-server or llama-cpp-python server; "
                        "its tokenizer cannot be used: choose another token counter")
    return ServerTokenizer(url, info.engine, model=info.model, api_key_env=api_key_env)
