"""The endpoint a run talks to: a remote one (probed), or an engine started for the run (the embedded
llama.cpp one, or vLLM with `--engine vllm`) and stopped on the way out (errors, Ctrl-C and SIGTERM too);
and the token counter that sizes its prompts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.evals.send.options import EndpointOptions
from ctxprobe.runners.chat_lead import with_chat_lead
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.http_json import display_url
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.settings import EngineSettings, part
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import PACKAGED_MODEL, TokenCounter, check_counter_spec

@dataclass(frozen=True)
class Served:
    config: EndpointConfig
    engine: dict[str, Any]
    counter_spec: str  # where the tokenizer is reached (recorded in the manifest, never in a recipe)
    counter: TokenCounter


def open_counter(spec: str, *, endpoint: str | None, api_key_env: str, policy: RetryPolicy | None = None,
                 concurrency: int = 8) -> TokenCounter:
    """A token counter from its spec; a bare `server` means `endpoint`'s own tokenizer, reached with the key
    under the run's retry policy, `concurrency` tokenize calls at a time."""
    from ctxprobe.runners.tokenize import make_counter

    check_counter_spec(spec)
    if spec == "server" and endpoint:
        spec = f"server:{endpoint}"
    return make_counter(spec, api_key_env=api_key_env, policy=policy, concurrency=concurrency)


def _policy(opts: EndpointOptions) -> RetryPolicy:
    """The retry policy of every call but the completions (which take the same settings)."""
    return RetryPolicy(timeout_s=opts.timeout, max_retries=opts.retries)


def embedded_counter_spec(model_file: str | None) -> str:
    """The GGUF's own vocabulary, read offline where it can be (SentencePiece-style); else the engine's."""
    if not model_file:
        return f"local:{PACKAGED_MODEL}"
    from ctxprobe.tasks.gguf_counter import counts_offline

    return f"local:{model_file}" if counts_offline(Path(model_file)) else "server"


@contextlib.contextmanager
def serving(opts: EndpointOptions, suite: Suite) -> Iterator[Served]:
    """Probe the endpoint (or start the embedded engine) and open the token counter."""
    from ctxprobe.runners.probe import probe_engine

    policy = _policy(opts)
    if opts.endpoints:
        info = probe_engine(opts.endpoints[0], model=opts.model, api_key_env=opts.api_key_env, policy=policy)
        yield _remote(opts, opts.endpoints, info, policy)
        return
    if opts.engine == "vllm":
        from ctxprobe.runners.settings import VllmSettings
        from ctxprobe.runners.vllm_engine import VllmEngine

        with VllmEngine(settings=part(opts, VllmSettings), model_alias=opts.model) as vllm:
            info = vllm.info()
            yield _remote(opts.model_copy(update={"model": vllm.model_alias}), [vllm.base_url], info, policy)
        return
    from ctxprobe.runners.launcher import EmbeddedEngine

    spec = opts.token_counter or embedded_counter_spec(opts.model_file)
    offline = not spec.startswith("server")
    counter = open_counter(spec, endpoint=None, api_key_env=opts.api_key_env) if offline else None  # fail fast
    settings = part(opts, EngineSettings)
    if settings.n_ctx is None:  # sized to the suite
        settings = settings.model_copy(update={"n_ctx": default_n_ctx(suite)})
    with EmbeddedEngine(opts.model_file, settings=settings) as engine:
        info = engine.info()
        if counter is None:  # the engine's own tokenizer, now that it runs
            spec = f"server:{engine.base_url}"
            counter = open_counter(spec, endpoint=None, api_key_env=opts.api_key_env, policy=policy,
                                   concurrency=opts.concurrency or opts.parallel or 1)
        else:  # counted offline; the chat template is the server's
            counter = with_chat_lead(counter, engine.base_url, info.engine, model=info.model,
                                     api_key_env=opts.api_key_env, policy=policy)
        # The launcher knows what suits its server; the user's flags win.
        overrides = {"concurrency": opts.concurrency} if opts.concurrency else {}
        yield Served(engine.endpoint_config(opts, **overrides), info.model_dump(), spec, counter)


def _remote(opts: EndpointOptions, urls: list[str], info: Any, policy: RetryPolicy) -> Served:
    """A served endpoint ctxprobe did not start itself: counted by its own tokenizer unless told otherwise."""
    concurrency = opts.concurrency or info.default_concurrency
    spec = opts.token_counter or f"server:{urls[0]}"
    counter = open_counter(spec, endpoint=urls[0], api_key_env=opts.api_key_env, policy=policy, concurrency=concurrency)
    counter = with_chat_lead(counter, urls[0], info.engine, model=info.model, api_key_env=opts.api_key_env,
                             policy=policy)
    spec = f"server:{urls[0]}" if spec == "server" else spec
    config = EndpointConfig.of(opts, base_urls=tuple(urls), mode="chat", concurrency=concurrency)
    return Served(config, info.model_dump(), _shown_spec(spec), counter)


def _shown_spec(spec: str) -> str:
    """A counter spec as the manifest keeps it: a server's URL without credentials."""
    kind, _, where = spec.partition(":")
    return f"server:{display_url(where)}" if kind == "server" and where else spec


def default_n_ctx(suite: Suite) -> int:
    """The longest prompt plus room for the answer, rounded up to 256."""
    longest = max(max(t.lengths or suite.lengths) for t in suite.tasks)
    return -(-(longest + 512) // 256) * 256
