"""The endpoint a run talks to: a remote one (probed), or an engine started for the run by the launcher
`--engine` names (runners/launchers/: the embedded llama.cpp one by default, vLLM, or any registered one)
and stopped on the way out (errors, Ctrl-C and SIGTERM too); and the token counter that sizes its prompts.
No engine is named here: each launcher decides how its engine is sized, started and counted."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from ctxprobe.evals.run.send.options import EndpointOptions
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.launchers import Launch, launcher_for
from ctxprobe.runners.response import EngineInfo
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.served import as_remote
from ctxprobe.runners.settings import LogprobSettings
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import TokenCounter

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
    """The requests the endpoint serves at once, where known before it is reached: the slots the launcher
    starts its engine with (a remote server's are known once it answers)."""
    if opts.endpoints:
        return None
    return launcher_for(opts.engine).slots(opts.launcher)


def default_mode(opts: EndpointOptions) -> Mode:
    """The endpoint's default mode: chat for a remote endpoint, else the launcher's own (chat for a vLLM server
    ctxprobe starts: it serves a model folder with its chat template; completions for the embedded engine)."""
    return REMOTE_MODE if opts.endpoints else launcher_for(opts.engine).default_mode


def _policy(opts: EndpointOptions) -> RetryPolicy:
    """The retry policy of every call but the completions (which take the same settings)."""
    return RetryPolicy.of(opts)


@contextlib.contextmanager
def serving(opts: EndpointOptions, suite: Suite, logprobs: LogprobSettings | None = None) -> Iterator[Served]:
    """Probe the endpoint (or start the engine `opts.engine` names) and open the token counter; the run's mode is
    `suite.run_mode(opts.mode, default_mode(opts))`; the answers' log-probabilities as `logprobs` ask where a
    run serves."""
    with _serving(opts, suite) as served:
        asked = logprobs if logprobs is not None else served.logprobs
        yield dataclasses.replace(served, logprobs=asked)


def _probe_first(urls: list[str], opts: EndpointOptions, policy: RetryPolicy) -> EngineInfo:
    """The probe of the first replica that answers (one dead from the start leaves the others to serve);
    with none answering, the first one's failure."""
    from ctxprobe.runners.probe import probe_engine
    from ctxprobe.runners.retry import CallFailed

    first: CallFailed | None = None
    for url in urls:
        try:
            return probe_engine(url, model=opts.model, api_key_env=opts.api_key_env, policy=policy)
        except CallFailed as err:
            if err.status is not None:  # it answered (a refused key): the answer is final
                raise
            first = first or err
    assert first is not None
    raise first


@contextlib.contextmanager
def _serving(opts: EndpointOptions, suite: Suite) -> Iterator[Served]:
    policy = _policy(opts)
    fallback = default_mode(opts)
    mode = suite.run_mode(opts.mode, fallback)
    if opts.endpoints:
        urls = list(opts.endpoints)
        info = _probe_first(urls, opts, policy)
        found = as_remote(
            opts, urls, info, policy, mode, concurrency=opts.concurrency, token_counter=opts.token_counter
        )
        yield Served(found.config, found.engine, found.counter_spec, found.counter, fallback)
        return
    chosen = launcher_for(opts.engine)
    launch = Launch(
        client=opts,
        settings=opts.launcher,
        token_counter=opts.token_counter,
        concurrency=opts.concurrency,
        mode=mode,
        suite=suite,
    )
    with chosen.serve(launch) as found:
        yield Served(found.config, found.engine, found.counter_spec, found.counter, fallback)
