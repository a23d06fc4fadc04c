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
from ctxprobe.runners.settings import ClientSettings, part, problem
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode


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
        leaves the server's."""
        given = {k: v for k, v in part(settings, ClientSettings).model_dump().items() if v is not None}
        return cls(**{**server, **given})

    def request_timeout_s(self, planned_tokens: int) -> float:
        """The whole-request deadline: base + per-1K-prompt-tokens x planned tokens."""
        return self.timeout + self.timeout_per_1k * max(planned_tokens, 0) / 1000.0

    @property
    def retry_policy(self) -> RetryPolicy:
        """The policy of every other call to this endpoint (probe, tokenize, metrics): the same retries and
        backoff, and the base timeout as each call's deadline."""
        return RetryPolicy.of(self).with_backoff(self.backoff_base_s, self.backoff_max_s)
