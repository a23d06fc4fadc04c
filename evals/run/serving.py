"""The endpoint a run talks to: a remote one (probed), or the embedded engine started for the run and
stopped on the way out (errors, Ctrl-C and SIGTERM too); and the token counter that sizes its prompts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxprobe.evals.run.options import EndpointOptions
from ctxprobe.runners.endpoint import EndpointConfig
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import PACKAGED_MODEL, TokenCounter, check_counter_spec, make_token_counter

REMOTE_CONCURRENCY = 4


@dataclass(frozen=True)
class Served:
    config: EndpointConfig
    engine: dict[str, Any]
    counter_spec: str  # where the tokenizer is reached (recorded in the manifest, never in a recipe)
    counter: TokenCounter


def open_counter(spec: str, *, endpoint: str | None, api_key_env: str) -> TokenCounter:
    """A token counter from its spec; `server` counters use the endpoint (and its key) unless they name one."""
    check_counter_spec(spec)
    kind, _, arg = spec.partition(":")
    if kind == "server":
        from ctxprobe.runners.tokenize import server_token_counter

        url = arg or endpoint
        if not url:
            from ctxprobe.tasks.errors import UserError

            raise UserError("token counter 'server' needs an endpoint URL (server:http://host:port)")
        return server_token_counter(url, api_key_env=api_key_env)
    return make_token_counter(spec)


@contextlib.contextmanager
def serving(opts: EndpointOptions, suite: Suite) -> Iterator[Served]:
    """Probe the endpoint (or start the embedded engine) and open the token counter."""
    from ctxprobe.runners.probe import probe_engine

    given = _client_settings(opts)
    if opts.endpoints:
        info = probe_engine(opts.endpoints[0], model=opts.model, api_key_env=opts.api_key_env)
        spec = opts.token_counter or f"server:{opts.endpoints[0]}"
        counter = open_counter(spec, endpoint=opts.endpoints[0], api_key_env=opts.api_key_env)
        slots = getattr(info, "slots", None)
        config = EndpointConfig(base_urls=tuple(opts.endpoints), mode="chat",
                                concurrency=opts.concurrency or slots or REMOTE_CONCURRENCY, **given)
        yield Served(config, info.model_dump(), spec, counter)
        return
    from ctxprobe.runners.launcher import EmbeddedEngine

    spec = opts.token_counter or (f"local:{opts.model_file}" if opts.model_file else f"local:{PACKAGED_MODEL}")
    counter = open_counter(spec, endpoint=None, api_key_env=opts.api_key_env)  # before the engine: fail fast
    n_ctx = opts.n_ctx or default_n_ctx(suite)
    with EmbeddedEngine(model_file=opts.model_file, n_ctx=n_ctx, kv_cache_type=opts.kv_cache_type,
                        threads=opts.threads) as engine:
        info = engine.info()
        # The launcher knows what suits its server; the user's flags win.
        overrides = {"concurrency": opts.concurrency} if opts.concurrency else {}
        yield Served(engine.endpoint_config(**overrides, **given), info.model_dump(), spec, counter)


def default_n_ctx(suite: Suite) -> int:
    """The longest prompt plus room for the answer, rounded up to 256."""
    longest = max(max(t.lengths or suite.lengths) for t in suite.tasks)
    return -(-(longest + 512) // 256) * 256


def _client_settings(opts: EndpointOptions) -> dict[str, Any]:
    """Client settings from the options that apply to any endpoint."""
    given: dict[str, Any] = {"api_key_env": opts.api_key_env, "timeout_base_s": opts.timeout,
                             "timeout_per_1k_tokens_s": opts.timeout_per_1k, "max_retries": opts.retries}
    if opts.model:
        given["model"] = opts.model
    return given
