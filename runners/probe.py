"""Which engine serves an endpoint, its version, context length, slots and model, for the run manifest.

`GET /v1/models` first (its `owned_by` hints the engine), then each engine adapter's identifying call
(runners/engines/, facts in docs/ENGINES.md) until one answers as its engine. Every call carries the API
key from the configured variable. llama-cpp-python states neither its context length nor its version: a
caller that knows them passes them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxprobe.runners.engines import EngineAdapter, adapters
from ctxprobe.runners.engines.base import dig
from ctxprobe.runners.http_json import EndpointCalls
from ctxprobe.runners.response import DEFAULT_CONCURRENCY, EngineInfo
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.runners.shown_text import shown_body
from ctxprobe.tasks.errors import UserError

__all__ = ["DEFAULT_CONCURRENCY", "EngineInfo", "UnknownModel", "detect", "identify", "probe_engine"]


class UnknownModel(UserError):
    """`--model` names a model the endpoint does not serve (an engine that refuses other names)."""

    def __init__(self, model: str, url: str, served: list[str]) -> None:
        super().__init__(f"--model {model!r} is not served at {url}; it serves: {', '.join(served)}")
        self.model, self.served = model, served


def detect(calls: EndpointCalls, owned_by: str | None) -> tuple[EngineAdapter | None, Mapping[str, Any]]:
    """(the adapter, the body of its identifying call): the `owned_by` hint first, then each in turn."""
    order = adapters()
    order.sort(key=lambda a: a.owned_by != owned_by)  # stable: the hinted engine first
    for adapter in order:
        body = adapter.identify(calls)
        if body is not None:
            return adapter, body
    return None, {}


def identify(
    calls: EndpointCalls, model: str | None
) -> tuple[Mapping[str, Any], list[Mapping[str, Any]], EngineAdapter | None, Mapping[str, Any]]:
    """(the model's card from `GET /v1/models`, every card, the engine's adapter, the body of its identifying
    call). Raises `UserError` when the endpoint answers `/v1/models` with something that is not a list of
    models."""
    status, listed = calls.send("GET", "/v1/models")
    cards = dig(listed, "data") if status == 200 and isinstance(listed, Mapping) else None
    if status == 200 and not isinstance(cards, list):  # an HTTP server, but not an OpenAI-compatible one
        raise UserError(
            f"endpoint {calls.shown} did not give an OpenAI-compatible answer to GET /v1/models "
            f"(no list of models): {shown_body(listed, 120)!r}; is this the server's URL and port?"
        )
    cards = [c for c in cards if isinstance(c, Mapping)] if isinstance(cards, list) else []
    card: Mapping[str, Any] = next((c for c in cards if c.get("id") == model), cards[0] if cards else {})
    owned_by = card.get("owned_by")
    adapter, ident = detect(calls, owned_by if isinstance(owned_by, str) else None)
    return card, cards, adapter, ident


def probe_engine(
    base_url: str,
    *,
    model: str | None = None,
    n_ctx: int | None = None,
    version: str | None = None,
    timeout_s: float = 10.0,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    policy: RetryPolicy | None = None,
) -> EngineInfo:
    """Identify the engine at `base_url`. `n_ctx` is used where the engine states no context length
    (llama-cpp-python); `version`, from a caller that knows it better, replaces what the engine states
    (the embedded wheel's build_info says `b0-unknown`). Raises `UserError` when the endpoint
    does not answer or refuses the key, and `UnknownModel` when `model` is not among those an engine that
    refuses other names (vLLM, SGLang) lists. With a `policy` its timeout replaces `timeout_s`."""
    calls = EndpointCalls(base_url, policy=policy, timeout_s=None if policy else timeout_s, api_key_env=api_key_env)
    card, cards, adapter, ident = identify(calls, model)
    served = [str(c["id"]) for c in cards if c.get("id") is not None]
    if model and served and model not in served and adapter is not None and adapter.checks_model_name:
        raise UnknownModel(model, calls.shown, served)
    context_length = adapter.context_length(card, ident) if adapter else None
    source = adapter.context_source if adapter and context_length else None
    if context_length is None and n_ctx is not None:
        context_length, source = n_ctx, "launcher n_ctx"
    stated = adapter.version(ident) if adapter else None
    block = None
    if adapter is not None and adapter.states_reuse_block:
        status, body = calls.send("GET", "/metrics")
        block = adapter.reuse_block(body) if status == 200 and isinstance(body, str) else None
    info = EngineInfo(
        engine=adapter.name if adapter else "unknown",
        version=version if version is not None else stated,
        context_length=context_length,
        context_source=source,
        model=str(card["id"]) if card.get("id") is not None else model,
        base_url=calls.shown,
        slots=adapter.slots(ident) if adapter else None,
        reuse_block=block,
    )
    info._stated = (card, ident)
    return info
