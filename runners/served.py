"""An answering endpoint, as a run talks to it: the client's config, the engine's facts, and the token
counter that sizes its prompts. Below the run (evals/run/send/serving.py) because both sides make one: the
run for a remote endpoint, and a launcher (runners/launchers/) for an engine it started, which may count
through the same path a remote endpoint does (`as_remote`: vLLM) or through its own (the embedded engine's
offline GGUF vocabulary)."""

from __future__ import annotations

from dataclasses import dataclass

from ctxprobe.runners.chat_lead import with_chat_lead
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.http_json import display_url
from ctxprobe.runners.response import EngineInfo, in_flight
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.settings import ClientSettings
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.token_counter import TokenCounter, check_counter_spec


@dataclass(frozen=True)
class Launched:
    """An endpoint that answers: `config` names the model the probe found (so no client lists `/v1/models`
    again) and the run's mode; `counter_spec` is where the tokenizer is reached (recorded in the manifest,
    never in a recipe)."""

    config: EndpointConfig
    engine: EngineInfo
    counter_spec: str
    counter: TokenCounter


def open_counter(
    spec: str,
    *,
    endpoint: str | None,
    api_key_env: str,
    policy: RetryPolicy | None = None,
    concurrency: int = 8,
    info: EngineInfo | None = None,
    replicas: tuple[str, ...] = (),
) -> TokenCounter:
    """A token counter from its spec; a bare `server` means `endpoint`'s own tokenizer, reached with the key
    under the run's retry policy, `concurrency` tokenize calls at a time. `info`, the probe of `endpoint`,
    spares its tokenizer a second probe. `replicas`: the deployment's servers, `endpoint` among them: its
    tokenizer fails over to the others (runners/replica_calls.py)."""
    from ctxprobe.runners.server_tokenizer import make_counter

    check_counter_spec(spec)
    if spec == "server" and endpoint:
        spec = f"server:{endpoint}"
    probed = info if endpoint and spec == f"server:{endpoint}" else None
    return make_counter(
        spec, api_key_env=api_key_env, policy=policy, concurrency=concurrency, info=probed, replicas=tuple(replicas)
    )


def as_remote(
    client: ClientSettings,
    urls: list[str],
    info: EngineInfo,
    policy: RetryPolicy,
    mode: Mode,
    *,
    concurrency: int | None,
    token_counter: str | None,
) -> Launched:
    """A served endpoint ctxprobe did not start itself (or a vLLM server it did): counted by its own tokenizer
    unless told otherwise (`token_counter`), the probe's model and facts handed to every client; `concurrency`
    as the user gave it (None: what the probe advises)."""
    concurrency = in_flight(concurrency, info.slots)
    spec = token_counter or f"server:{urls[0]}"
    counter = open_counter(
        spec,
        endpoint=urls[0],
        api_key_env=client.api_key_env,
        policy=policy,
        concurrency=concurrency,
        info=info,
        replicas=tuple(urls),
    )
    counter = with_chat_lead(
        counter, urls, info.engine, model=info.model, api_key_env=client.api_key_env, policy=policy
    )
    spec = f"server:{urls[0]}" if spec == "server" else spec
    config = EndpointConfig.of(client, base_urls=tuple(urls), mode=mode, model=info.model, concurrency=concurrency)
    return Launched(config, info, shown_spec(spec), counter)


def shown_spec(spec: str) -> str:
    """A counter spec as the manifest keeps it: a server's URL without credentials."""
    kind, _, where = spec.partition(":")
    return f"server:{display_url(where)}" if kind == "server" and where else spec
