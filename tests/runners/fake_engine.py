"""A fake OpenAI-compatible engine (stdlib http.server in a thread on 127.0.0.1), for what the real
embedded engine cannot show: the response shapes of vLLM, SGLang and llama-server, the four too-long 400
bodies of docs/ENGINES.md, Prometheus metrics, an API key it requires, injected 429/500/slow/dropped replies,
reasoning fields and `<think>` text.

    with FakeEngine("vllm", context_length=100) as engine:
        engine.script.append(Reply(status=429))     # the next completion call answers 429
        ... EndpointConfig(base_urls=(engine.url,)) ...
        engine.requests                             # what arrived: Recorded(path, body, headers, at)

    FakeEngine("sglang", api_key="k-123")           # answers 401 to any request without "Bearer k-123"
    FakeEngine(answer=lambda body: ...)             # an answer per request, from its JSON body
    FakeEngine("toy", routes={("GET", "/toy/info"): lambda engine, body: (200, {...})},
               too_long=lambda engine, limit, prompt_tokens: {...})   # an engine the fake does not know
    FakeEngine(follows_chat=False)                  # a base model: ignores the chat check's instruction

What it says of each engine (`owned_by`, metric names, whether there is a /metrics) comes from the engine
adapters' registry (runners/engines/); the registered engines it has response shapes for are `FLAVORS`.

An instruction-following model (the default) answers the run's and doctor's chat check ("Reply with the
single word: ready.") with the word; those checks are not among `completion_calls()` (see `chat_checks()`).
Like every engine, it stops at `max_tokens` (one token a word) with finish_reason `length`.
Faults around the completions, for the run's hardening: `tokenize_fail_every=7` (every 7th tokenize call
answers 503), `tokenize_fail_after=N` (every tokenize call after the Nth answers 503), `tokenize_delay_s`,
`tokenize_noise=3` (counts off by a random -3..+3: a tokenizer that is not the model's), `usage_scale=3.0`
(usage.prompt_tokens three times the prompt's), `prefill_s_per_token=1e-4` (each completion waits that many
seconds per prompt token before answering: a prefill time linear in length; `prefill_s_per_square=1e-9`: that
many seconds per squared prompt token, attention's growth), `accepts_up_to=N` (rejects prompts over N tokens whatever
context it states), `freeze()` (stops answering anything, as a SIGSTOPped server: connections are accepted
and left unanswered until `thaw()` or close), `slow_loris("/tokenize", ...)` (from then on, requests to those
paths, or to every path when none is named, get their headers and then a byte a second, or every `every_s`, forever). `peak_in_flight["completions"|"tokenize"]` is the most
requests of each kind it was serving at once.

Tokens are whitespace-separated words; every flavor puts one BOS before a prompt, as real engines do for
models that declare one. Reusable by any test: import it by path from tests/runners/.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxprobe.runners.engines import adapter, known_engines

Flavor = str  # a registered engine's name
_VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23", "llama-server": "b7000-abc1234", "llama-cpp-python": "0.3.36"}
FLAVORS: tuple[Flavor, ...] = tuple(name for name in known_engines() if name in _VERSIONS)  # shapes served below
Route = Callable[["FakeEngine", Any], tuple[int, Any]]
CHAT_TEMPLATE_TOKENS = 7  # what the fake chat template adds around one user message (BOS included)


@dataclass
class Reply:
    """One scripted answer to the next completion call (consumed first-in, first-out)."""

    status: int = 200
    body: Any = None  # JSON for an error reply; None: the normal answer
    delay_s: float = 0.0  # wait before any byte of the answer (a long prefill)
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without answering
    html: str | None = None  # answer this page as text/html instead (a proxy's error page)


@dataclass(frozen=True)
class Recorded:
    path: str
    body: Any
    headers: dict[str, str]  # by lower-case name
    at: float = field(default_factory=time.monotonic)  # when it arrived (one clock across engines)


def too_long_body(
    flavor: Flavor, *, limit: int, prompt_tokens: int, chat: bool = False, max_tokens: int = 16, sglang_variant: int = 0
) -> dict[str, Any]:
    """The HTTP 400 body each engine sends for a prompt over its context, as docs/ENGINES.md gives them."""
    if flavor == "vllm":
        return {
            "error": {
                "message": f"This model's maximum context length is {limit} tokens. However, your prompt contains "
                f"{prompt_tokens} input tokens. Please reduce the length of the input prompt.",
                "type": "BadRequestError",
                "param": "input_tokens",
                "code": 400,
            }
        }
    if flavor == "sglang":
        message = (
            f"The input ({prompt_tokens} tokens) is longer than the model's context length ({limit} tokens)."
            if sglang_variant == 0
            else f"Requested token count exceeds the model's maximum context length of {limit} tokens."
        )
        return {"object": "error", "message": message, "type": "BadRequestError", "code": 400}
    if flavor == "llama-server":
        return {
            "error": {
                "code": 400,
                "message": f"request ({prompt_tokens} tokens) exceeds the available context size ({limit} tokens), "
                "try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt_tokens,
                "n_ctx": limit,
            }
        }
    total = prompt_tokens + max_tokens
    message = (
        f"This model's maximum context length is {limit} tokens. However, you requested {total} tokens "
        f"({prompt_tokens} in the messages, {max_tokens} in the completion). "
        "Please reduce the length of the messages or completion."
        if chat
        else f"This model's maximum context length is {limit} tokens, however you requested {total} tokens "
        f"({prompt_tokens} in your prompt; {max_tokens} for the completion). "
        "Please reduce your prompt; or completion length."
    )
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


CHAT_CHECK = "Reply with the single word: "  # how ctxprobe's chat check (evals/run/answer_style.py) starts


def _is_chat_check(body: Any) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    return bool(messages) and str(messages[-1].get("content", "")).startswith(CHAT_CHECK)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 refuses bursts of concurrent connections

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up waiting: not news
            super().handle_error(request, client_address)


class FakeEngine:
    def __init__(
        self,
        flavor: Flavor = "vllm",
        *,
        model: str = "fake-model",
        context_length: int = 4096,
        answer: str | Callable[[dict[str, Any]], str] = "The answer is 42.",
        reasoning: str | None = None,
        version: str | None = None,
        n_ctx_train: int = 131072,
        slots: int = 1,
        api_key: str | None = None,
        routes: dict[tuple[str, str], Route] | None = None,
        too_long: Callable[[FakeEngine, int, int], Any] | None = None,
        follows_chat: bool = True,
        tokenize_fail_every: int = 0,
        tokenize_fail_after: int | None = None,
        tokenize_delay_s: float = 0.0,
        tokenize_noise: int = 0,
        usage_scale: float = 1.0,
        accepts_up_to: int | None = None,
        completion_delay_s: float = 0.0,
        prefill_s_per_token: float = 0.0,
        prefill_s_per_square: float = 0.0,
    ) -> None:
        self.flavor = flavor
        self.adapter = adapter(flavor)
        self.routes = routes or {}
        self.too_long = too_long
        self.model = model
        self.context_length = context_length
        self.answer = answer
        self.reasoning = reasoning
        self.version = version or _VERSIONS.get(flavor, "1.0")
        self.n_ctx_train = n_ctx_train
        self.slots = slots
        self.api_key = api_key
        self.follows_chat = follows_chat
        self.tokenize_fail_every = tokenize_fail_every
        self.tokenize_fail_after = tokenize_fail_after
        self.tokenize_delay_s = tokenize_delay_s
        self.tokenize_noise = tokenize_noise
        self.usage_scale = usage_scale
        self.accepts_up_to = accepts_up_to
        self.completion_delay_s = completion_delay_s
        self.prefill_s_per_token = prefill_s_per_token
        self.prefill_s_per_square = prefill_s_per_square
        self.tokenize_calls = 0
        self.killed = False
        self.dripping: tuple[str, ...] = ()
        self.drip_every_s = 1.0
        self.in_flight = {"completions": 0, "tokenize": 0}
        self.peak_in_flight = {"completions": 0, "tokenize": 0}
        self._noise = random.Random(0)
        self._thawed = threading.Event()
        self._thawed.set()
        self.cached_tokens = 0
        self.script: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeEngine:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def slow_loris(self, *paths: str, every_s: float = 1.0) -> None:
        """From now on answer requests to `paths` (every path when none is given) with headers, then a byte
        every `every_s` seconds until closed: a server that is never silent long enough for a per-read timeout."""
        self.dripping = paths or ("",)
        self.drip_every_s = every_s

    def drips(self, path: str) -> bool:
        return any(path.startswith(p) for p in self.dripping)

    def freeze(self) -> None:
        """Stop answering: every request (new or read from now on) waits, unanswered, until thawed."""
        self._thawed.clear()

    def thaw(self) -> None:
        self._thawed.set()

    def wait_if_frozen(self) -> None:
        while not self._thawed.wait(0.05) and not self._stop.is_set():
            pass

    def enter(self, kind: str) -> None:
        with self._lock:
            self.in_flight[kind] += 1
            self.peak_in_flight[kind] = max(self.peak_in_flight[kind], self.in_flight[kind])

    def leave(self, kind: str) -> None:
        with self._lock:
            self.in_flight[kind] -= 1

    def tokenize_fault(self) -> bool:
        """Whether this tokenize call answers 503 (the injected faults), counting the call."""
        with self._lock:
            self.tokenize_calls += 1
            n = self.tokenize_calls
        if self.tokenize_fail_after is not None and n > self.tokenize_fail_after:
            return True
        return bool(self.tokenize_fail_every) and n % self.tokenize_fail_every == 0

    def noisy(self, count: int) -> int:
        if not self.tokenize_noise:
            return count
        with self._lock:
            return max(0, count + self._noise.randint(-self.tokenize_noise, self.tokenize_noise))

    def kill(self) -> None:
        """Go away as a killed server does: the port refuses, and kept-alive connections close unanswered."""
        self.killed = True
        self.close()

    def close(self) -> None:
        self._thawed.set()
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def completion_calls(self) -> list[Recorded]:
        """The completion requests, the chat checks left out."""
        return [
            r
            for r in self.requests
            if r.path in ("/v1/completions", "/v1/chat/completions") and not _is_chat_check(r.body)
        ]

    def model_listings(self) -> int:
        """How many times `GET /v1/models` was asked."""
        return sum(1 for r in self.requests if r.path == "/v1/models" and r.body is None)

    def chat_checks(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/chat/completions" and _is_chat_check(r.body)]

    # --- the fake model -------------------------------------------------------------------------------
    @staticmethod
    def words(text: str) -> int:
        return len(text.split())

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        if "messages" in body:
            return sum(self.words(str(m.get("content", ""))) for m in body["messages"]) + CHAT_TEMPLATE_TOKENS
        return self.words(str(body.get("prompt", ""))) + 1

    def answer_to(self, body: dict[str, Any]) -> str:
        """The text this request is answered with: the fixed answer, or what the answer function makes of it
        (the word the chat check asks for, from a model that follows chat)."""
        if self.follows_chat and _is_chat_check(body):
            return str(body["messages"][-1]["content"]).rsplit(" ", 1)[-1].rstrip(".")
        return self.answer(body) if callable(self.answer) else self.answer

    def next_reply(self) -> Reply | None:
        with self._lock:
            return self.script.popleft() if self.script else None

    def wait(self, seconds: float) -> None:
        self._stop.wait(seconds)


def _handler_for(engine: FakeEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)

        def _record(self, body: Any) -> None:
            with engine._lock:
                engine.requests.append(Recorded(self.path, body, {k.lower(): v for k, v in self.headers.items()}))

        def _refused(self) -> bool:
            """401 (and True) when the engine requires a key and this request lacks it."""
            if engine.api_key is None or self.headers.get("Authorization") == f"Bearer {engine.api_key}":
                return False
            self._json(401, {"error": {"message": "Invalid API Key", "type": "authentication_error", "code": 401}})
            return True

        def _text(self, status: int, text: str, content_type: str = "text/plain; version=0.0.4") -> None:
            raw = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _drip(self) -> None:
            """Headers, then a space every `drip_every_s` (valid JSON whitespace, an SSE line never ended) until
            closed."""
            self.close_connection = True
            stream = self.path.endswith("completions")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
            self.send_header("Content-Length", str(10**9))
            self.end_headers()
            self.wfile.flush()
            while not engine._stop.is_set():
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:  # the client gave up: as it should
                    return
                engine.wait(engine.drip_every_s)

        def do_GET(self) -> None:
            engine.wait_if_frozen()
            if engine.killed:  # a killed process answers nothing, on a connection kept alive too
                self.close_connection = True
                return
            self._record(None)
            if engine.drips(self.path):
                return self._drip()
            if self._refused():
                return
            flavor = engine.flavor
            if ("GET", self.path) in engine.routes:
                return self._json(*engine.routes["GET", self.path](engine, None))
            if self.path == "/metrics" and engine.adapter.metrics:
                return self._text(200, _metrics(engine))
            if self.path == "/v1/models":
                card: dict[str, Any] = {
                    "id": engine.model,
                    "object": "model",
                    "created": 1700000000,
                    "owned_by": engine.adapter.owned_by,
                }
                if flavor in ("vllm", "sglang"):
                    card.update(root=engine.model, max_model_len=engine.context_length)
                elif flavor == "llama-server":
                    card.update(meta={"n_ctx_train": engine.n_ctx_train, "n_vocab": 262144})
                else:
                    card.update(permissions=[])
                return self._json(200, {"object": "list", "data": [card]})
            if self.path == "/version" and flavor == "vllm":
                return self._json(200, {"version": engine.version})
            if self.path == "/server_info" and flavor == "sglang":
                return self._json(
                    200,
                    {
                        "version": engine.version,
                        "max_req_input_len": engine.context_length - 5,
                        "context_length": engine.context_length,
                    },
                )
            if self.path == "/props" and flavor == "llama-server":
                return self._json(
                    200,
                    {
                        "default_generation_settings": {"n_ctx": engine.context_length},
                        "total_slots": engine.slots,
                        "build_info": engine.version,
                    },
                )
            self._json(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            engine.wait_if_frozen()
            if engine.killed:
                self.close_connection = True
                return
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"null")
            self._record(body)
            if engine.drips(self.path):
                return self._drip()
            if self._refused():
                return
            path = self.path
            if ("POST", path) in engine.routes:
                return self._json(*engine.routes["POST", path](engine, body))
            kind = "completions" if path in ("/v1/completions", "/v1/chat/completions") else "tokenize"
            engine.enter(kind)
            try:
                if kind == "completions":
                    return self._complete(body, chat=path.endswith("chat/completions"))
                if engine.tokenize_delay_s:
                    engine.wait(engine.tokenize_delay_s)
                if engine.tokenize_fault():
                    return self._json(503, {"error": {"message": "Service Unavailable", "code": 503}})
                return self._tokenize(body, path)
            finally:
                engine.leave(kind)

        def _tokenize(self, body: Any, path: str) -> None:
            flavor = engine.flavor
            if (flavor == "vllm" and path == "/tokenize") or (
                flavor == "sglang" and path in ("/tokenize", "/v1/tokenize")
            ):
                if "messages" in body:
                    count = engine.prompt_tokens(body)
                elif isinstance(body["prompt"], list):  # SGLang: a list of prompts, each counted apart
                    if flavor != "sglang":  # vLLM's `prompt` is one string (a 400 from its request model)
                        return self._json(
                            400,
                            {
                                "error": {
                                    "message": "prompt: Input should be a valid string",
                                    "type": "BadRequestError",
                                    "code": 400,
                                }
                            },
                        )
                    special = 1 if body.get("add_special_tokens", True) else 0
                    counts = [engine.noisy(engine.words(p) + special) for p in body["prompt"]]
                    return self._json(
                        200,
                        {
                            "tokens": [list(range(n)) for n in counts],
                            "count": counts,
                            "max_model_len": engine.context_length,
                        },
                    )
                else:
                    count = engine.words(body["prompt"]) + (1 if body.get("add_special_tokens", True) else 0)
                count = engine.noisy(count)
                return self._json(
                    200, {"count": count, "max_model_len": engine.context_length, "tokens": list(range(count))}
                )
            if flavor == "llama-server" and path == "/tokenize":
                content = body["content"]
                if isinstance(content, list):  # llama-server: each string tokenized apart, numbers are token ids
                    tokens: list[int] = []
                    for piece in content:
                        tokens += list(range(engine.noisy(engine.words(piece)))) if isinstance(piece, str) else [piece]
                    return self._json(200, {"tokens": tokens})
                count = engine.noisy(engine.words(content) + (1 if body.get("add_special", False) else 0))
                return self._json(200, {"tokens": list(range(count))})
            if flavor == "llama-server" and path == "/v1/chat/completions/input_tokens":
                return self._json(200, {"input_tokens": engine.prompt_tokens(body)})
            if flavor == "llama-cpp-python" and path in ("/extras/tokenize", "/extras/tokenize/count"):
                count = engine.words(body["input"]) + 1
                return self._json(200, {"count": count} if path.endswith("count") else {"tokens": list(range(count))})
            self._json(404, {"detail": "Not Found"})

        def _complete(self, body: dict[str, Any], *, chat: bool) -> None:
            checking = engine.follows_chat and _is_chat_check(body)  # the script is for completion calls
            reply = Reply() if checking else engine.next_reply() or Reply(delay_s=engine.completion_delay_s)
            if reply.delay_s:
                engine.wait(reply.delay_s)
            engine.wait_if_frozen()
            if reply.drop:
                self.close_connection = True
                return
            if reply.html is not None:
                return self._text(reply.status, reply.html, "text/html")
            if reply.status != 200 or reply.body is not None:
                return self._json(
                    reply.status, reply.body or {"error": {"message": "injected", "code": reply.status}}, reply.headers
                )
            prompt_tokens = engine.prompt_tokens(body)
            if (engine.prefill_s_per_token or engine.prefill_s_per_square) and not checking:
                engine.wait(engine.prefill_s_per_token * prompt_tokens + engine.prefill_s_per_square * prompt_tokens**2)
            limit = engine.accepts_up_to or engine.context_length
            if prompt_tokens >= limit:
                bad = (
                    engine.too_long(engine, limit, prompt_tokens)
                    if engine.too_long
                    else too_long_body(
                        engine.flavor,
                        limit=limit,
                        prompt_tokens=prompt_tokens,
                        chat=chat,
                        max_tokens=int(body.get("max_tokens") or 16),
                    )
                )
                return self._json(400, bad)
            prompt_tokens = round(prompt_tokens * engine.usage_scale)
            answer = engine.answer_to(body)
            pieces = [w + " " for w in answer.split(" ")]
            pieces[-1] = pieces[-1].rstrip(" ")
            finish = "stop"
            limit = body.get("max_tokens")
            if isinstance(limit, int) and len(pieces) > limit:  # one token a word, as the fake counts them
                pieces, finish = pieces[:limit], "length"
                answer = "".join(pieces)
            usage: dict[str, Any] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(pieces),
                "total_tokens": prompt_tokens + len(pieces),
            }
            if engine.flavor == "llama-server":
                usage["prompt_tokens_details"] = {"cached_tokens": engine.cached_tokens}
            if body.get("stream"):
                return self._stream(body, chat, pieces, usage, finish)
            if chat:
                message: dict[str, Any] = {"role": "assistant", "content": answer}
                if engine.reasoning is not None:
                    message[self._reasoning_field()] = engine.reasoning
                choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
            else:
                choice = {"index": 0, "text": answer, "logprobs": None, "finish_reason": finish}
            out: dict[str, Any] = {
                "id": "cmpl-1",
                "object": "chat.completion" if chat else "text_completion",
                "created": 1700000000,
                "model": engine.model,
                "choices": [choice],
                "usage": usage,
            }
            if engine.flavor == "llama-server":
                out["timings"] = {"cache_n": engine.cached_tokens, "prompt_n": prompt_tokens, "prompt_ms": 1.0}
            self._json(200, out)

        def _reasoning_field(self) -> str:
            return "reasoning" if engine.flavor == "vllm" else "reasoning_content"

        def _stream(
            self, body: dict[str, Any], chat: bool, pieces: list[str], usage: dict[str, Any], finish: str = "stop"
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            kind = "chat.completion.chunk" if chat else "text_completion"

            def chunk(choice: dict[str, Any] | None, **extra: Any) -> None:
                data = {
                    "id": "cmpl-1",
                    "object": kind,
                    "created": 1700000000,
                    "model": engine.model,
                    "choices": [] if choice is None else [{"index": 0, "finish_reason": None, **choice}],
                    **extra,
                }
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            if chat:
                chunk({"delta": {"role": "assistant", "content": ""}})
                if engine.reasoning is not None:
                    for word in engine.reasoning.split(" "):
                        chunk({"delta": {self._reasoning_field(): word + " "}})
                for piece in pieces:
                    chunk({"delta": {"content": piece}})
                chunk({"delta": {}, "finish_reason": finish})
            else:
                for piece in pieces:
                    chunk({"text": piece, "logprobs": None})
                chunk({"text": "", "logprobs": None, "finish_reason": finish})
            extra: dict[str, Any] = {}
            if engine.flavor == "llama-server":
                extra["timings"] = {"cache_n": engine.cached_tokens, "prompt_n": usage["prompt_tokens"]}
            if (body.get("stream_options") or {}).get("include_usage"):
                chunk(None, usage=usage, **extra)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


# Prometheus names from docs/ENGINES.md that the fake exports, two label sets each where engines label by
# model; an engine not listed here exports every name its adapter reads.
_METRICS = {
    "vllm": [
        "vllm:prefix_cache_queries_total",
        "vllm:prefix_cache_hits_total",
        "vllm:prompt_tokens_cached_total",
        "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds_sum",
        "vllm:time_to_first_token_seconds_count",
        "vllm:spec_decode_num_accepted_tokens_total",
        "vllm:spec_decode_num_draft_tokens_total",
    ],
    "sglang": ["sglang:cached_tokens_total", "sglang:prompt_tokens_total", "sglang:cache_hit_rate"],
    "llama-server": ["llamacpp:prompt_tokens_total", "llamacpp:prompt_tokens_cached_total"],
}


def _metrics(engine: FakeEngine) -> str:
    """Counters that grow with the completions served: 40 per call for cache metrics, 60 accepted draft
    tokens, 100 for the rest (prompt tokens, draft tokens, TTFT sum and count)."""
    calls = len(engine.completion_calls())
    lines = []
    for name in _METRICS.get(engine.flavor, engine.adapter.metrics.values()):
        value = calls * (40 if "cache" in name else 60 if "accepted" in name else 100)
        lines += [
            f"# TYPE {name} counter",
            f'{name}{{model_name="{engine.model}",replica="a"}} {value / 2}',
            f'{name}{{model_name="{engine.model}",replica="b"}} {value / 2}',
        ]
    return "\n".join(lines) + "\n"


def wait_until(predicate: Any, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False
