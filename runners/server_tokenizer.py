"""Exact token counts from the served model's own tokenizer, through the engine adapter's tokenize call
(runners/engines/; docs/ENGINES.md): vLLM `POST /tokenize`, SGLang `POST /v1/tokenize`, llama-server
`POST /tokenize`, llama-cpp-python `POST /extras/tokenize[/count]`. Every call carries the API key.

Counts are of the text alone, without BOS. llama-cpp-python's call always adds BOS (`adds_bos`), so its
answer is reduced by what it gives for the empty text. `bos_tokens` is what the endpoint puts before a
completion prompt, for callers that plan a prompt's full length.

Every call is under the run's retry policy and `--timeout` (runners.retry): a 5xx is retried, a frozen
server costs one timeout, and a call that still fails raises `CallFailed`. Given the replicas of a deployment,
the counter fails over as the completions do (runners/replica_calls.py): one replica lost mid-run leaves the
counting to the others. Counting many texts keeps
`concurrency` calls in flight on daemon threads (runners.daemon_threads), so a build that is stopped
leaves no queue of calls behind. Where the engine counts a list of texts in one call (llama-server,
SGLang: docs/ENGINES.md), many texts are a few calls: a cold 1M-token prompt's 50,000 haystack units take a
few hundred instead of one each."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cached_property, lru_cache
from typing import Any

from ctxprobe.runners.daemon_threads import daemon_map
from ctxprobe.runners.engines import Call, adapter, known_engines
from ctxprobe.runners.http_json import api_root, display_url
from ctxprobe.runners.probe import EngineInfo, probe_engine
from ctxprobe.runners.replica_calls import calls_to
from ctxprobe.runners.retry import CallFailed, RetryPolicy
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.runners.shown_text import shown_body
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import TokenCounter, make_token_counter

BATCH_TEXTS = 512  # texts counted in one call, where the engine takes a list
BATCH_CHARS = 512 * 1024  # and their characters (a longer text is a batch of its own)
# What a batched count is checked on against one call per text: words, an empty text, digits, special text.
BATCH_PROBE = ("Hello.", "", " 1234567 and 0x3f9a", "<start_of_turn>user\n")


def batches(texts: Sequence[str]) -> list[Sequence[str]]:
    """`texts` cut in order into runs of at most `BATCH_TEXTS` texts and `BATCH_CHARS` characters."""
    runs: list[Sequence[str]] = []
    start = size = 0
    for i, text in enumerate(texts):
        if i > start and (i - start == BATCH_TEXTS or size + len(text) > BATCH_CHARS):
            runs.append(texts[start:i])
            start, size = i, 0
        size += len(text)
    if start < len(texts):
        runs.append(texts[start:])
    return runs


class ServerTokenizer:
    """A token counter backed by the endpoint (satisfies `tasks.token_counter.TokenCounter`)."""

    approximate = False

    def __init__(
        self,
        base_url: str | Sequence[str],
        engine: str,
        *,
        model: str | None = None,
        concurrency: int = 8,
        policy: RetryPolicy | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
    ) -> None:
        """`base_url`: the server, or the replicas of one deployment (named by the first)."""
        if engine not in known_engines():
            raise UserError(f"no tokenize call known for engine {engine!r}; known: {', '.join(known_engines())}")
        self.adapter = adapter(engine)
        self.calls = calls_to(
            (base_url,) if isinstance(base_url, str) else tuple(base_url), policy=policy, api_key_env=api_key_env
        )
        self.base_url = self.calls.shown  # for messages and the manifest: never a credential
        self.engine = engine
        self.model = model
        self.concurrency = max(1, concurrency)
        self.spec = f"server:{self.base_url}"
        self.identity = f"{engine}:{model or ''}"
        self._bos_lock = threading.Lock()
        self._pair_lock = threading.Lock()
        self._batch_lock = threading.Lock()
        self._batches_ok: bool | None = None

    @property
    def adds_bos(self) -> bool:
        """Whether the engine's tokenize call counts a BOS of its own (llama-cpp-python: always)."""
        return self.adapter.adds_bos_always and self._call_bos > 0

    @property
    def _call_bos(self) -> int:
        with self._bos_lock:  # asked once, whichever build thread asks first
            if not hasattr(self, "_bos_of_call"):
                self._bos_of_call = self._raw_count("", special=True) if self.adapter.adds_bos_always else 0
            return self._bos_of_call

    @cached_property
    def bos_tokens(self) -> int:
        """Special tokens the endpoint puts before a completion prompt (BOS), not part of a text count."""
        if self.adapter.adds_bos_always:
            return self._call_bos
        return max(0, self._raw_count("", special=True) - self._raw_count("", special=False))

    def count(self, text: str) -> int:
        return self._raw_count(text, special=False) - self._call_bos

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts in the order given, at most `concurrency` requests at a time; the first failure stops
        the calls not yet sent. Where the engine counts a list in one call (and its answers were checked
        against one-text calls), the texts go in batches of at most `BATCH_TEXTS` texts and `BATCH_CHARS`
        characters."""
        if len(texts) > 1 and self.counts_batches:
            counted = daemon_map(self._count_batch, batches(texts), self.concurrency)
            return [n for counts in counted for n in counts]
        return daemon_map(self.count, texts, self.concurrency)

    @property
    def counts_batches(self) -> bool:
        """Whether the engine counts a list of texts in one call, each as a call of its own would: checked
        once, on a few texts, against one call per text."""
        with self._batch_lock:
            if self._batches_ok is None:
                probe = list(BATCH_PROBE)
                call = self.adapter.batch_count_call(probe, model=self.model)
                body = self._post(call, soft=True) if call is not None else {}
                counts = self.adapter.read_batch_counts(body, len(probe)) if body else None
                self._batches_ok = counts is not None and counts == [self.count(t) for t in probe]
            return self._batches_ok

    def _count_batch(self, texts: Sequence[str]) -> list[int]:
        call = self.adapter.batch_count_call(texts, model=self.model)
        assert call is not None  # counts_batches said the engine has the call
        counts = self.adapter.read_batch_counts(self._post(call), len(texts))
        if counts is None:
            raise UserError(
                f"tokenize call {call.path} at {self.base_url} ({self.engine}) answered a list of "
                f"{len(texts)} texts without their {len(texts)} counts"
            )
        return counts

    def token_ids(self, text: str) -> list[int]:
        """The text's token ids as the endpoint splits it, without BOS."""
        call = self.adapter.tokenize_call(text, special=False, model=self.model)
        tokens = self.adapter.read_tokens(self._post(call))
        if tokens is None:
            raise UserError(f"tokenize call {call.path} at {self.base_url} ({self.engine}) answered without tokens")
        return tokens[self._call_bos :]

    def chat_overhead(self, content: str = "Hello.") -> int | None:
        """Tokens the chat template adds around one user message (with the generation prompt), or None
        where the engine cannot apply its template through a tokenize call."""
        call = self.adapter.chat_call([{"role": "user", "content": content}], self.model)
        if call is None:
            return None
        body = self._post(call, soft=True)
        total = self.adapter.read_chat_count(body) if body else None
        return total - self.count(content) if total is not None else None

    def chat_pair_overhead(self, content: str = "Hello.") -> int | None:
        """Tokens the chat template adds for one more (assistant, user) pair of messages in a conversation,
        measured once (None where the engine cannot apply its template through a tokenize call)."""
        with self._pair_lock:  # its own lock: measuring counts text, which reads the BOS under _bos_lock
            if not hasattr(self, "_pair_overhead"):
                self._pair_overhead = self._measure_pair(content)
            return self._pair_overhead

    def _measure_pair(self, content: str) -> int | None:
        one = [{"role": "user", "content": content}]
        three = [*one, {"role": "assistant", "content": content}, *one]
        totals = []
        for messages in (one, three):
            call = self.adapter.chat_call(messages, self.model)
            body = self._post(call, soft=True) if call is not None else {}
            totals.append(self.adapter.read_chat_count(body) if body else None)
        if totals[0] is None or totals[1] is None:
            return None
        return totals[1] - totals[0] - 2 * self.count(content)

    def _raw_count(self, text: str, *, special: bool) -> int:
        call = self.adapter.count_call(text, special=special, model=self.model)
        value = self.adapter.read_count(self._post(call))
        if value is None:
            raise UserError(f"tokenize call at {self.base_url} ({self.engine}) answered without a token count")
        return value

    def _post(self, call: Call, *, soft: bool = False) -> dict[str, Any]:
        status, body = self.calls.send("POST", call.path, call.payload)
        if status == 200 and isinstance(body, dict):
            return body
        if soft:  # the engine cannot do it (no template, no route): not an error
            return {}
        raise CallFailed(
            f"tokenize call {call.path} at {self.base_url} ({self.engine}) failed with HTTP {status}: "
            f"{shown_body(body)}",
            status=status,
        )


def server_token_counter(
    url: str,
    *,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    policy: RetryPolicy | None = None,
    concurrency: int = 8,
    info: EngineInfo | None = None,
    replicas: Sequence[str] = (),
) -> ServerTokenizer:
    """Count with the endpoint's tokenizer, `concurrency` calls at a time under `policy`; the endpoint is
    probed unless its probe's `info` is given. `replicas`: the other servers of the same deployment, which
    take the calls `url` does not answer."""
    info = info if info is not None else probe_engine(url, api_key_env=api_key_env, policy=policy)
    if info.engine == "unknown":
        raise UserError(
            f"endpoint {display_url(api_root(url))} is not a known engine ({', '.join(known_engines())}); "
            "its tokenizer cannot be used: choose another token counter"
        )
    urls = list(dict.fromkeys([api_root(url), *(api_root(r) for r in replicas)]))
    return ServerTokenizer(
        urls, info.engine, model=info.model, api_key_env=api_key_env, policy=policy, concurrency=concurrency
    )


@lru_cache(maxsize=8)
def make_counter(
    spec: str,
    *,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    policy: RetryPolicy | None = None,
    concurrency: int = 8,
    info: EngineInfo | None = None,
    replicas: tuple[str, ...] = (),
) -> TokenCounter:
    """Any token counter from its spec (tasks.token_counter), the `server` kind reached with the API key
    from `api_key_env` under `policy`, `concurrency` calls at a time. One counter per (spec, key variable,
    policy, concurrency, replicas) per process, so counts are cached once. `info`: the server's probe, when
    the caller has probed it already. `replicas`: a deployment's servers; a `server` spec naming one of them
    fails over to the others."""

    def server(url: str) -> ServerTokenizer:
        roots = [api_root(r) for r in replicas]
        others = roots if api_root(url) in roots else []
        return server_token_counter(
            url, api_key_env=api_key_env, policy=policy, concurrency=concurrency, info=info, replicas=others
        )

    return make_token_counter(spec, server=server)
