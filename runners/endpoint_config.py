"""How to reach an endpoint (`EndpointConfig`): the user's client settings and what suits the server.

Apart from the client (runners/endpoint.py) so that choosing and checking settings loads no HTTP client: a
command with a bad option says so before openai is imported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from ctxprobe.runners.http_json import api_root
from ctxprobe.runners.response import DEFAULT_CONCURRENCY
from ctxprobe.runners.retry import BACKOFF_BASE_S, BACKOFF_MAX_S, RetryPolicy
from ctxprobe.runners.settings import ClientSettings, problem
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode

PREFILL_SHARE = 0.25  # a deadline counts on a quarter of the measured prefill rate (a busy CPU, a neighbour)
MIN_MEASURED_TOKENS = 256  # shorter prefills measure the request's overhead, not the rate
# The prefill rates a user may give (--prefill-rate): a CPU's slowest to many GPUs' fastest. Below, a deadline
# would never end (1e-300 tok/s waits out a frozen server for ever); above, every deadline is the base alone.
PREFILL_RATE_MIN = 10.0
PREFILL_RATE_MAX = 10_000_000.0


class PrefillRate:
    """Uncached prompt tokens per second to the first answer token, over the requests answered so far (the
    time to the first token, or the whole request where the stream had none), or the rate given before the
    run; None before either. Measured under the run's own concurrency, so a request's wait for a slot counts."""

    def __init__(self, given: float | None = None) -> None:
        self.given = given
        self.tokens = 0
        self.seconds = 0.0

    def observe(self, prompt_tokens: int | None, cached_tokens: int | None, seconds: float | None) -> None:
        fresh = (prompt_tokens or 0) - (cached_tokens or 0)
        if fresh >= MIN_MEASURED_TOKENS and seconds and seconds > 0:
            self.tokens += fresh
            self.seconds += seconds

    @property
    def per_s(self) -> float | None:
        return self.tokens / self.seconds if self.seconds > 0 else self.given


class EndpointConfig(ClientSettings):
    """How to reach an endpoint: the user's `ClientSettings` (by the same names) and what suits the server.
    Holds the NAME of the API-key variable, never the key."""

    model_config = ConfigDict(frozen=True)

    base_urls: tuple[str, ...] = Field(description="server roots; several are replicas of one deployment")
    mode: Mode = Field("completions", title="mode")
    concurrency: int = Field(DEFAULT_CONCURRENCY, ge=1, description="requests in flight")
    connect_timeout_s: float = Field(10.0, gt=0)
    backoff_base_s: float = BACKOFF_BASE_S
    backoff_max_s: float = BACKOFF_MAX_S
    stream: bool = True  # llama-cpp-python: False (its stream has no usage and hides a too-long error)
    extra_body: Mapping[str, Any] = Field(default_factory=dict)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise UserError(problem(type(self), exc)) from None

    @field_validator("base_urls", mode="before")
    @classmethod
    def _roots(cls, urls: Any) -> tuple[str, ...]:
        urls = (urls,) if isinstance(urls, str) else tuple(urls)
        if not urls:
            raise UserError("no endpoint given: pass --endpoint http://host:port")
        return tuple(dict.fromkeys(api_root(u) for u in urls))

    @classmethod
    def of(cls, settings: ClientSettings, **server: Any) -> EndpointConfig:
        """What suits the server (`base_urls`, `mode`, `concurrency`, its model name, ...) with the user's
        client settings (any model made of `ClientSettings`) taken as given; a model left unnamed (None)
        leaves the server's (a None the server has no value for stands: `session_header` None sends none)."""
        own = settings.model_dump(include=set(ClientSettings.model_fields))
        given = {k: v for k, v in own.items() if v is not None or k not in server}
        return cls(**{**server, **given})

    prefill_rate: float | None = Field(
        None,
        ge=PREFILL_RATE_MIN,
        le=PREFILL_RATE_MAX,
        allow_inf_nan=False,
        description="prefill tokens/s known before the run (--prefill-rate, "
        "as `--dry-run` measured it); the run's own measure replaces it",
    )

    def request_timeout_s(self, planned_tokens: int, prefill_rate: float | None = None) -> float:
        """The whole-response deadline (headers and body): base + per-1K-prompt-tokens x planned tokens, or,
        where the prefill rate is known (measured on the run's answers, else `prefill_rate`), the time the
        prompt takes at a pessimistic share of it (`PREFILL_SHARE`) plus the base as the answer's room,
        whichever is longer: a measured rate only ever lengthens a deadline."""
        formula = self.timeout + self.timeout_per_1k * max(planned_tokens, 0) / 1000.0
        rate = prefill_rate or self.prefill_rate
        if not rate:
            return formula
        return max(formula, self.timeout + max(planned_tokens, 0) / (PREFILL_SHARE * rate))

    def timeout_flag(self, planned_tokens: int) -> str:
        """The flag that lengthens this request's deadline the most: the per-1K share for a long prompt."""
        return "--timeout-per-1k" if self.timeout_per_1k * planned_tokens / 1000.0 >= self.timeout else "--timeout"

    @property
    def retry_policy(self) -> RetryPolicy:
        """The policy of every other call to this endpoint (probe, tokenize, metrics): the same retries and
        backoff, and the base timeout as each call's deadline."""
        return RetryPolicy.of(self).with_backoff(self.backoff_base_s, self.backoff_max_s)
