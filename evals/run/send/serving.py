"""The endpoint a run talks to: a remote one (probed), or an engine started for the run (the embedded
llama.cpp one, or vLLM with `--engine vllm`) and stopped on the way out (errors, Ctrl-C and SIGTERM too);
and the token counter that sizes its prompts."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from ctxprobe.evals.run.send.options import EndpointOptions
from ctxprobe.runners.chat_lead import with_chat_lead
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.http_json import display_url
from ctxprobe.runners.launcher import EMBEDDED_MODE
from ctxprobe.runners.response import EngineInfo, in_flight
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.settings import ClientSettings, EngineSettings, LogprobSettings, part
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import PACKAGED_MODEL, TokenCounter, check_counter_spec

REMOTE_MODE: Mode = "chat"  # a remote endpoint's default: instruct models behind OpenAI-compatible servers


@dataclass(frozen=True)
class Served:
    """The endpoint a run talks to, decided once: `config` names the model the probe found (so no client
    lists `/v1/models` again) and the run's resolved mode (`Suite.run_mode`), which the manifest records."""

    config: EndpointConfig
    engine: EngineInfo
    counter_spec: str  # where the tokenizer is reached (recorded in the manifest, never in a recipe)
    counter: TokenCounter
    default_mode: Mode  # the endpoint's own default, for tasks that declare no mode
    # the run's: read the answers' probabilities? (off where a command other than run serves)
    logprobs: LogprobSettings = dataclasses.field(default_factory=lambda: LogprobSettings(logprobs=False))

    @property
    def model(self) -> str | None:
        return self.config.model

    @property
    def mode(self) -> Mode:
        return self.config.mode


def known_slots(opts: EndpointOptions) -> int | None:
    """The requests the endpoint serves at once, where known before it is reached: the slots ctxprobe starts
    the embedded engine with (a remote server's, or vLLM's, are known once it answers)."""
    return part(opts, EngineSettings).slots if not opts.endpoints and opts.engine != "vllm" else None


def default_mode(opts: EndpointOptions) -> Mode:
    """The endpoint's default mode: chat for a remote endpoint and for a vLLM server ctxprobe starts (it serves
    a model folder with its chat template), completions for the embedded engine."""
    return REMOTE_MODE if opts.endpoints or opts.engine == "vllm" else EMBEDDED_MODE


def open_counter(spec: str, *, endpoint: str | None, api_key_env: str, policy: RetryPolicy | None = None,
                 concurrency: int = 8, info: EngineInfo | None = None) -> TokenCounter:
    """A token counter from its spec; a bare `server` means `endpoint`'s own tokenizer, reached with the key
    under the run's retry policy, `concurrency` tokenize calls at a time. `info`, the probe of `endpoint`,
    spares its tokenizer a second probe."""
    from ctxprobe.runners.tokenize import make_counter

    check_counter_spec(spec)
    if spec == "server" and endpoint:
        spec = f"server:{endpoint}"
    probed = info if endpoint and spec == f"server:{endpoint}" else None
    return make_counter(spec, api_key_env=api_key_env, policy=policy, concurrency=concurrency, info=probed)


def _policy(opts: EndpointOptions) -> RetryPolicy:
    """The retry policy of every call but the completions (which take the same settings)."""
    return RetryPolicy.of(part(opts, ClientSettings))


def embedded_counter_spec(model_file: str | None) -> str:
    """The GGUF's own vocabulary, read offline where it can be (SentencePiece-style); else the engine's."""
    if not model_file:
        return f"local:{PACKAGED_MODEL}"
    from ctxprobe.tasks.gguf_counter import counts_offline

    return f"local:{model_file}" if counts_offline(Path(model_file)) else "server"


@contextlib.contextmanager
def serving(opts: EndpointOptions, suite: Suite, logprobs: LogprobSettings | None = None) -> Iterator[Served]:
    """Probe the endpoint (or start the embedded engine) and open the token counter; the run's mode is
    `suite.run_mode(opts.mode, default_mode(opts))`; the answers' log-probabilities as `logprobs` (or the
    options') ask where a run serves."""
    with _serving(opts, suite) as served:
        if logprobs is None and isinstance(opts, LogprobSettings):
            logprobs = part(opts, LogprobSettings)
        asked = logprobs if logprobs is not None else served.logprobs
        yield dataclasses.replace(served, logprobs=asked)


@contextlib.contextmanager
def _serving(opts: EndpointOptions, suite: Suite) -> Iterator[Served]:
    from ctxprobe.runners.probe import probe_engine

    policy = _policy(opts)
    fallback = default_mode(opts)
    mode = suite.run_mode(opts.mode, fallback)
    if opts.endpoints:
        info = probe_engine(opts.endpoints[0], model=opts.model, api_key_env=opts.api_key_env, policy=policy)
        yield _remote(opts, opts.endpoints, info, policy, mode, fallback)
        return
    if opts.engine == "vllm":
        from ctxprobe.runners.settings import VllmSettings
        from ctxprobe.runners.vllm_engine import VllmEngine

        with VllmEngine(settings=part(opts, VllmSettings), model_alias=opts.model) as vllm:
            info = vllm.info()
            yield _remote(opts.model_copy(update={"model": vllm.model_alias}), [vllm.base_url], info, policy, mode,
                          fallback)
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
            counter = open_counter(spec, endpoint=engine.base_url, api_key_env=opts.api_key_env, policy=policy,
                                   concurrency=in_flight(opts.concurrency, settings.slots), info=info)
        else:  # counted offline; the chat template is the server's
            counter = with_chat_lead(counter, engine.base_url, info.engine, model=info.model,
                                     api_key_env=opts.api_key_env, policy=policy)
        # The launcher knows what suits its server; the user's flags win.
        config = engine.endpoint_config(opts, mode=mode, concurrency=in_flight(opts.concurrency, engine.parallel))
        yield Served(config, info, spec, counter, fallback)


def _remote(opts: EndpointOptions, urls: list[str], info: EngineInfo, policy: RetryPolicy, mode: Mode,
            fallback: Mode) -> Served:
    """A served endpoint ctxprobe did not start itself (or a vLLM server it did): counted by its own tokenizer
    unless told otherwise, the probe's model and facts handed to every client."""
    concurrency = in_flight(opts.concurrency, info.slots)
    spec = opts.token_counter or f"server:{urls[0]}"
    counter = open_counter(spec, endpoint=urls[0], api_key_env=opts.api_key_env, policy=policy,
                           concurrency=concurrency, info=info)
    counter = with_chat_lead(counter, urls[0], info.engine, model=info.model, api_key_env=opts.api_key_env,
                             policy=policy)
    spec = f"server:{urls[0]}" if spec == "server" else spec
    config = EndpointConfig.of(opts, base_urls=tuple(urls), mode=mode, model=info.model, concurrency=concurrency)
    return Served(config, info, _shown_spec(spec), counter, fallback)


def _shown_spec(spec: str) -> str:
    """A counter spec as the manifest keeps it: a server's URL without credentials."""
    kind, _, where = spec.partition(":")
    return f"server:{display_url(where)}" if kind == "server" and where else spec


def default_n_ctx(suite: Suite) -> int:
    """The longest prompt plus room for the answer, rounded up to 256."""
    longest = max(max(t.lengths or suite.lengths) for t in suite.tasks)
    return -(-(longest + 512) // 256) * 256
