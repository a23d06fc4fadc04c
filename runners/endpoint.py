"""Sending one prompt to an OpenAI-compatible endpoint and reading back a typed `Response`.

Built on `openai.AsyncOpenAI` with the SDK's own retries off: this client retries 429, 5xx and connection
errors itself under the one retry policy every call shares (runners.retry: exponential backoff with
jitter, honouring Retry-After), never a too-long 400 and never a timeout (a prefill that ran out of time
once will run out again). Messages and responses name a replica without its credentials. Each request's deadline
covers the whole response, headers and body (a server that drips a byte a second is cut off like a frozen
one), and grows with its planned prompt length, because a 1M-token prefill sends nothing for minutes: by
`--timeout-per-1k`, or by the prefill rate measured on the run's answers (`PrefillRate`), whichever gives
longer (runners/endpoint_config.py). Several base URLs are replicas of one deployment; each request goes to
the one with the fewest requests in flight, and a replica whose connection fails (refused, reset, cut
mid-answer) is taken out of rotation until it answers again (runners/replicas.py), its request sent to
another at once. A request of a chain (`chain`: the key of the prompts one prefix cache serves one after
another, tasks.identity.chain_key) carries the key in the session header (`--session-header`, default
X-Session-ID), so a router in front of several workers keeps the chain on one; sent in the cache-aware order,
it keeps to one replica itself (the next one when that one leaves the rotation).

One client belongs to one asyncio event loop. The SDK and its HTTP library load when the first client is
made (runners/lazy_module.py): importing them takes longer than everything ctxprobe does before its first
request, the probe, which needs neither.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ctxprobe.runners.endpoint_config import EndpointConfig, PrefillRate
from ctxprobe.runners.http_json import api_key, display_url, is_loopback
from ctxprobe.runners.lazy_module import lazy_module
from ctxprobe.runners.replicas import LeastInFlight
from ctxprobe.runners.reply import ReplyParts
from ctxprobe.runners.response import ErrorKind, ReplicaEvent, Response, no_answer
from ctxprobe.runners.retry import CallTimedOut, refused_key, retryable_status
from ctxprobe.runners.shown_text import one_line
from ctxprobe.runners.too_long import parse_too_long
from ctxprobe.tasks.errors import UserError

if TYPE_CHECKING:
    import httpx2
    import openai
else:
    httpx2 = lazy_module("httpx2")
    openai = lazy_module("openai")


# What the SDK raises when a 200 answer is not of the shape it reads (an HTML page, a bare string, a list):
# its typed objects fail on attribute access rather than with an error of their own.
_WRONG_SHAPE = (AttributeError, TypeError, KeyError)


class EndpointError(Exception):
    """A request that produced no usable response, typed for the sample record."""

    def __init__(
        self,
        kind: ErrorKind,
        detail: str,
        *,
        attempts: int = 1,
        limit: int | None = None,
        status: int | None = None,
        prompt_tokens: int | None = None,
        prompt_at_least: int | None = None,
    ) -> None:
        detail = one_line(detail, 600)  # it may quote a server's answer: one line, always
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail
        self.attempts = attempts
        self.limit = limit  # the context length a too-long rejection stated, where it did
        self.status = status  # the HTTP status of an error answer
        self.prompt_tokens = prompt_tokens  # the prompt length a too-long rejection stated, where it did
        self.prompt_at_least = prompt_at_least  # a lower bound of it, where the rejection said only that

    @property
    def key_refused(self) -> bool:
        return self.status is not None and refused_key(self.status)


class _Retryable(Exception):
    def __init__(self, kind: ErrorKind, detail: str, retry_after_s: float | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.retry_after_s = retry_after_s


def _reason(err: BaseException) -> str:
    cause = err.__cause__ or err.__context__
    return f"{err} ({type(cause).__name__}: {cause})" if cause is not None and str(cause) else str(err)


def _retry_after(response: httpx2.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _refuses_stream_options(err: openai.APIStatusError) -> bool:
    text = f"{err.message} {json.dumps(err.body, default=str)}"
    return err.status_code in (400, 422) and "stream_options" in text


@dataclass(frozen=True)
class _Request:
    """What one request asks, whichever replica it goes to and however often it is retried."""

    prompt: str | list[int]
    max_tokens: int
    seed: int
    extra_body: Mapping[str, Any] | None = None
    messages: list[dict[str, str]] | None = None
    logprobs: int | None = None
    logit_bias: Mapping[str, int] | None = None
    one_token: bool = False  # a scoring request (token ids): completions whatever the mode, not streamed
    chain: str | None = None  # the chain's key: the session header's value and the replica it keeps to


class EndpointClient:
    """`async with EndpointClient(config) as client: response = await client.send(...)`."""

    def __init__(
        self,
        config: EndpointConfig,
        *,
        rng: random.Random | None = None,
        on_replica_event: Callable[[ReplicaEvent], None] | None = None,
    ) -> None:
        self.config = config
        key = api_key(config.api_key_env)
        limits = httpx2.Limits(max_connections=config.concurrency, max_keepalive_connections=config.concurrency)
        self._clients = {
            root: openai.AsyncOpenAI(
                base_url=f"{root}/v1",
                api_key=key,
                max_retries=0,
                timeout=self._timeout(config.timeout),
                http_client=httpx2.AsyncClient(
                    limits=limits,
                    timeout=self._timeout(config.timeout),
                    trust_env=not is_loopback(root),
                    verify=root.startswith("https://"),  # plain http needs no TLS context (slow to build)
                ),
            )
            for root in config.base_urls
        }
        self._pool = LeastInFlight(
            config.base_urls,
            backoff_base_s=config.backoff_base_s,
            backoff_max_s=config.backoff_max_s,
            shown=display_url,
            on_event=on_replica_event,
        )
        self._slots = asyncio.Semaphore(config.concurrency)
        self._model = config.model
        self._model_lock = asyncio.Lock()
        self._stream_options = True
        self._rng = rng or random.Random()
        self.prefill = PrefillRate(config.prefill_rate)
        self._flying: dict[int, tuple[float, int]] = {}  # request -> (started, planned tokens)
        self._ticket = 0

    def longest_in_flight(self) -> tuple[float, float | None] | None:
        """The request out longest: (seconds since it was sent, seconds its prompt is expected to take at the
        measured prefill rate, None before any is measured); None when nothing is in flight."""
        if not self._flying:
            return None
        started, planned = min(self._flying.values())
        rate = self.prefill.per_s
        return time.monotonic() - started, (planned / rate if rate else None)

    def _timeout(self, total_s: float) -> httpx2.Timeout:
        return httpx2.Timeout(total_s, connect=min(self.config.connect_timeout_s, total_s))

    @property
    def in_flight(self) -> dict[str, int]:
        return dict(zip(self.config.base_urls, self._pool.in_flight))

    @property
    def replica_events(self) -> list[ReplicaEvent]:
        """Replicas taken out of rotation and put back, in order (runners/replicas.py)."""
        return list(self._pool.events)

    async def __aenter__(self) -> EndpointClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.close()

    async def resolve_model(self) -> str:
        """The configured model, else the first model the first replica lists."""
        if self._model is not None:
            return self._model
        async with self._model_lock:
            if self._model is None:
                root = self.config.base_urls[0]
                try:
                    async with asyncio.timeout(self.config.timeout):  # the whole answer, not each read
                        page = await self._clients[root].models.list(timeout=self._timeout(self.config.timeout))
                    names = [str(card.id) for card in page.data]
                except TimeoutError:
                    raise CallTimedOut(
                        f"endpoint {display_url(root)} did not answer GET /v1/models: no complete "
                        f"answer within {self.config.timeout:g} s (raise --timeout)"
                    ) from None
                except _WRONG_SHAPE:
                    raise UserError(
                        f"endpoint {display_url(root)} did not give an OpenAI-compatible answer to "
                        "GET /v1/models (no list of models); is this the server's URL and port?"
                    ) from None
                except openai.APIStatusError as err:
                    raise UserError(
                        f"endpoint {display_url(root)} did not list its models (HTTP {err.status_code}): "
                        f"{err.message}; name the model explicitly"
                    ) from None
                except openai.APIConnectionError as err:
                    raise UserError(f"endpoint {display_url(root)} is unreachable: {_reason(err)}") from None
                if not names:
                    raise UserError(f"endpoint {display_url(root)} lists no models; name the model explicitly")
                self._model = names[0]
        return self._model

    async def send(
        self,
        prompt: str,
        *,
        max_tokens: int,
        planned_tokens: int,
        seed: int,
        affinity: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        messages: list[dict[str, str]] | None = None,
        logprobs: int | None = None,
        chain: str | None = None,
    ) -> Response:
        """One prompt, one response; raises `EndpointError` for every way it can fail. `affinity` names the
        replica the first attempt goes to (prompts sharing a prefix keep to the replica that cached it);
        retries go to the least busy one. A replica whose connection fails is taken out of rotation and the
        request goes straight to another one in rotation, without spending a retry (at most once per other
        replica). `extra_body` adds fields to this request (a reasoning budget).
        In chat mode `messages` (a conversation) is sent in place of one user message holding `prompt`.
        `logprobs` asks for each generated token's log-probability and that many alternatives
        (`Response.generated`). `chain` names the prompt's chain: sent in the session header; a request
        placed by the cache-aware order (`affinity` given) goes, every attempt, to the replica its chain keeps
        to while that one is in rotation (runners/replicas.py), and a request sent as listed to the least
        busy."""
        request = _Request(prompt, max_tokens, seed, extra_body, messages, logprobs, chain=chain)
        return await self._send(request, planned_tokens, affinity)

    async def next_token(
        self,
        prompt_ids: list[int],
        *,
        force: int | None,
        top: int,
        planned_tokens: int,
        seed: int,
        max_tokens: int = 1,
        affinity: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        chain: str | None = None,
    ) -> Response:
        """Greedy tokens after the token ids `prompt_ids` (a completions request in any mode, not streamed)
        with their log-probabilities and `top` alternatives each; `force` a token: one token, forced to it by
        `logit_bias` (what the model gives that token there). On a prefix cache the prompt is served from the
        cache but for its last tokens. `chain` as for `send`."""
        bias = {str(force): 100} if force is not None else None
        request = _Request(
            prompt_ids,
            1 if force is not None else max_tokens,
            seed,
            extra_body,
            None,
            top,
            bias,
            one_token=True,
            chain=chain,
        )
        return await self._send(request, planned_tokens, affinity)

    async def _send(self, request: _Request, planned_tokens: int, affinity: int | None) -> Response:
        model = await self.resolve_model()
        async with self._slots:
            self._ticket += 1
            ticket = self._ticket
            self._flying[ticket] = (time.monotonic(), planned_tokens)
            try:
                return await self._each_attempt(request, planned_tokens, affinity, model, ticket)
            finally:
                del self._flying[ticket]

    async def _each_attempt(
        self, request: _Request, planned_tokens: int, affinity: int | None, model: str, ticket: int
    ) -> Response:
        attempts = failovers = 0
        kept = request.chain if affinity is not None else None  # placed: the chain keeps to one replica
        while True:
            timeout_s = self.config.request_timeout_s(planned_tokens, self.prefill.per_s)
            self._flying[ticket] = (time.monotonic(), planned_tokens)
            attempts += 1
            delay = 0.0
            with self._pool.use(affinity if attempts == 1 else None, chain=kept) as root:
                try:
                    response = await self._attempt(root, model, request, timeout_s)
                    self._pool.answered(root)
                    if not request.one_token:
                        self.prefill.observe(
                            response.prompt_tokens, response.cached_tokens, response.ttft_s or response.latency_s
                        )
                    return response.model_copy(update={"attempts": attempts})
                except _Retryable as retry:
                    if retry.kind is ErrorKind.connection_error:
                        self._pool.failed(root, retry.detail)
                        if failovers < len(self.config.base_urls) - 1 and self._pool.in_rotation_besides(root):
                            failovers += 1
                            continue
                    else:
                        self._pool.answered(root)
                    if attempts - failovers > self.config.retries:
                        raise EndpointError(
                            retry.kind, f"{retry.detail} (after {attempts} attempts)", attempts=attempts
                        ) from None
                    delay = self._backoff_s(attempts - failovers, retry.retry_after_s)
                except EndpointError as err:
                    if err.status is not None or err.kind is ErrorKind.rejected_too_long:
                        self._pool.answered(root)  # it answered: alive, whatever it said
                    if err.kind is ErrorKind.timeout:
                        flag = self.config.timeout_flag(planned_tokens)
                        err.detail = one_line(f"{err.detail}; raise {flag} to wait longer", 600)
                    err.attempts = attempts
                    raise
            await asyncio.sleep(delay)

    def _backoff_s(self, attempts: int, retry_after_s: float | None) -> float:
        return self.config.retry_policy.backoff_s(attempts, retry_after_s, self._rng)

    async def _attempt(self, root: str, model: str, asked: _Request, timeout_s: float) -> Response:
        client = self._clients[root]
        shown = display_url(root)
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": asked.max_tokens,
            "temperature": 0,
            "seed": asked.seed,
            "timeout": self._timeout(timeout_s),
        }
        if self.config.extra_body or asked.extra_body:
            request["extra_body"] = {**self.config.extra_body, **(asked.extra_body or {})}
        chat = self.config.mode == "chat" and not asked.one_token
        if chat:
            create: Any = client.chat.completions.create
            request["messages"] = asked.messages or [{"role": "user", "content": asked.prompt}]
            if asked.logprobs is not None:
                request.update(logprobs=True, top_logprobs=asked.logprobs)
        else:
            create = client.completions.create
            request["prompt"] = asked.prompt
            if asked.logprobs is not None:
                request["logprobs"] = asked.logprobs
        if asked.logit_bias:
            request["logit_bias"] = dict(asked.logit_bias)
        if asked.chain is not None and self.config.session_header:
            request["extra_headers"] = {self.config.session_header: asked.chain}
        stream = self.config.stream and not asked.one_token
        parts = ReplyParts()
        ttft_s: float | None = None
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_s):
                if stream:
                    chunks = await self._open_stream(create, request)
                    async with chunks:
                        async for chunk in chunks:
                            if parts.add_chunk(chunk) and ttft_s is None:
                                ttft_s = time.perf_counter() - started
                else:
                    parts.add_whole(await create(**request))
        except (TimeoutError, openai.APITimeoutError, httpx2.TimeoutException):
            raise EndpointError(
                ErrorKind.timeout, f"no complete answer from {shown} within {timeout_s:.0f} s"
            ) from None
        except httpx2.TransportError as err:  # the connection cut mid-answer (a replica killed while streaming)
            raise _Retryable(
                ErrorKind.connection_error, f"{shown}: the answer was cut off ({type(err).__name__}: {err})"
            ) from None
        except openai.APIStatusError as err:
            raise self._status_error(shown, err) from None
        except openai.APIConnectionError as err:
            raise _Retryable(ErrorKind.connection_error, f"{shown}: {_reason(err)}") from None
        except openai.APIError as err:  # an error event inside a 200 stream
            too_long = parse_too_long(err.body, err.message)
            if too_long is not None:
                raise EndpointError(
                    ErrorKind.rejected_too_long,
                    too_long.detail(),
                    limit=too_long.limit,
                    prompt_tokens=too_long.prompt_tokens,
                    prompt_at_least=too_long.prompt_at_least,
                ) from None
            raise EndpointError(ErrorKind.http_error, f"error in the stream from {shown}: {err.message}") from None
        except json.JSONDecodeError as err:
            raise EndpointError(ErrorKind.http_error, f"malformed stream from {shown}: {err}") from None
        except _WRONG_SHAPE:  # the SDK could not read the answer as a completion (an HTML page, a bare string)
            raise EndpointError(
                ErrorKind.http_error,
                f"not an OpenAI-compatible answer from {shown} ({'chat/' if chat else ''}completions)",
            ) from None
        latency_s = time.perf_counter() - started
        text, reasoning = parts.answer_and_reasoning()
        if no_answer(text, reasoning, parts.completion_tokens) and not (asked.one_token and parts.generated):
            cut = (
                ""
                if parts.finish_reason
                else "; the reply ended without a finish_reason (llama-cpp-python "
                "ends its stream so on errors such as a too-long prompt: use stream=False there)"
            )
            raise EndpointError(
                ErrorKind.empty,
                f"no text and no reasoning from {shown} (finish_reason={parts.finish_reason}, "
                f"completion_tokens={parts.completion_tokens}){cut}",
            )
        return Response(
            endpoint=shown,
            text=text,
            reasoning=reasoning,
            finish_reason=parts.finish_reason,
            prompt_tokens=parts.prompt_tokens,
            completion_tokens=parts.completion_tokens,
            reasoning_tokens=parts.reasoning_tokens,
            cached_tokens=parts.cached_tokens,
            latency_s=latency_s,
            ttft_s=ttft_s,
            timings=parts.timings,
            generated=parts.generated if asked.logprobs is not None else None,
        )

    async def _open_stream(self, create: Any, request: dict[str, Any]) -> Any:
        if self._stream_options:
            try:
                return await create(**request, stream=True, stream_options={"include_usage": True})
            except openai.APIStatusError as err:
                if not _refuses_stream_options(err) or parse_too_long(err.body, err.message) is not None:
                    raise
                self._stream_options = False  # this engine refuses stream_options: stream without usage
        return await create(**request, stream=True)

    def _status_error(self, root: str, err: openai.APIStatusError) -> Exception:
        status = err.status_code
        if 400 <= status < 500:
            too_long = parse_too_long(err.body, err.message)
            if too_long is not None:
                return EndpointError(
                    ErrorKind.rejected_too_long,
                    too_long.detail(),
                    limit=too_long.limit,
                    prompt_tokens=too_long.prompt_tokens,
                    prompt_at_least=too_long.prompt_at_least,
                    status=status,
                )
        said = err.message
        if isinstance(err.body, str) and err.body.strip():  # not JSON: the SDK's message leaves the text out
            said += f" - {err.body}"
        detail = f"HTTP {status} from {root}: {one_line(said)}"
        if retryable_status(status):
            return _Retryable(ErrorKind.http_error, detail, _retry_after(err.response))
        return EndpointError(ErrorKind.http_error, detail, status=status)
