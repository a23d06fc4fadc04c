"""What an endpoint states about its deployment, each fact with where it was read.

The deployment lint (runners/deployment_lint.py) holds these against the model's own config
(runners/model_facts.py) and the suite's lengths. Each engine adapter says where its engine states what
(`EngineAdapter.deployment_facts`, facts in docs/ENGINES.md, "Deployment lint"):

| fact | vLLM | SGLang | llama-server |
|---|---|---|---|
| served context | `/v1/models` `max_model_len` | `/v1/models` `max_model_len` | `/props` `default_generation_settings.n_ctx` (per slot) |
| slots | — | — | `/props` `total_slots` |
| trained context | — | — | `/v1/models` `meta.n_ctx_train` (the GGUF's) |
| model path | `/v1/models` `root` | `/server_info` `model_path` | `/props` `model_path` |
| config override | — | `/server_info` `json_model_override_args` | — |

No engine states whether context shift is on (llama-server's `/props` and `/slots` do not): an engine
ctxprobe starts says it (`with_launched`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ctxprobe.runners.engines.base import EngineAdapter, Stated, registered
from ctxprobe.runners.http_json import EndpointCalls
from ctxprobe.runners.probe import identify
from ctxprobe.runners.response import EngineInfo
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV

__all__ = ["EngineFacts", "Stated", "probed_facts", "read_engine_facts"]


@dataclass(frozen=True)
class EngineFacts:
    """What one endpoint states; a fact it does not state is None."""

    engine: str  # the adapter's name, or "unknown"
    model: str | None = None  # the served model's name
    served_context: Stated[int] | None = None  # the longest prompt + answer it takes (llama-server: per slot)
    slots: Stated[int] | None = None
    trained_context: Stated[int] | None = None  # the model's trained context, as the engine states it
    context_shift: Stated[bool] | None = None  # llama-server: drops the oldest tokens when a slot fills
    model_path: Stated[str] | None = None  # the model folder or file the engine loaded
    config_overrides: Stated[dict[str, Any]] | None = None  # model-config keys the engine overrides

    def with_launched(self, **facts: Stated[Any]) -> EngineFacts:
        """These facts with what the launcher of an engine ctxprobe started knows better."""
        changes: dict[str, Any] = dict(facts)
        return replace(self, **changes)


_FIELDS = {f.name for f in fields(EngineFacts)} - {"engine", "model"}


def read_engine_facts(
    base_url: str,
    *,
    model: str | None = None,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    policy: RetryPolicy | None = None,
    timeout_s: float = 10.0,
) -> EngineFacts:
    """Ask the endpoint (its `/v1/models` and its engine's identifying call) what it states. Raises
    `UserError` when it does not answer as an OpenAI-compatible server."""
    calls = EndpointCalls(base_url, policy=policy, timeout_s=None if policy else timeout_s, api_key_env=api_key_env)
    card, _, adapter, ident = identify(calls, model)
    return _facts(card, adapter, ident, model)


def probed_facts(info: EngineInfo) -> EngineFacts | None:
    """The facts of an endpoint `probe_engine` identified, from what it read (no call); None where it read
    nothing (an `EngineInfo` made otherwise)."""
    if info._stated is None:
        return None
    card, ident = info._stated
    return _facts(card, registered().get(info.engine), ident, info.model)


def _facts(
    card: Mapping[str, Any], adapter: EngineAdapter | None, ident: Mapping[str, Any], model: str | None
) -> EngineFacts:
    name = str(card["id"]) if card.get("id") is not None else model
    if adapter is None:
        return EngineFacts(engine="unknown", model=name)
    stated = adapter.deployment_facts(card, ident)
    unknown = set(stated) - _FIELDS
    if unknown:  # an adapter's bug, not the user's
        raise ValueError(f"{adapter.name}: deployment facts {sorted(unknown)} are not EngineFacts fields")
    return EngineFacts(engine=adapter.name, model=name, **stated)
