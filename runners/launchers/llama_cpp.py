"""`--engine llama.cpp`, the default: the embedded llama-server (runners/launcher.py) serving the packaged
Gemma 3 270M GGUF or a user's GGUF, its context sized to the suite unless the user sized it.

Its prompts are counted offline by the GGUF's own vocabulary where it can be read (SentencePiece-style; the
packaged model's always), with the chat template's tokens measured once at the server; else by the server's
tokenizer, once it runs. The packaged model is a base model: a run is in completions mode unless told.

An `--n-ctx` above the model's trained context (the GGUF's `<arch>.context_length`) is not what llama-server
allocates: it caps each slot at the trained context, saying so only in its log. ctxprobe says it in one line on
stderr, with what the server allocated (`GET /props`), and keeps both in the manifest's engine facts
(`context_requested`, `context_trained`; `context_length` is what was allocated; `threads`, the CPU threads it
computed with). It is a warning, not a
refusal: a prompt that fits what was allocated is served at its own length, and one that does not is never
sent (the run's too-long check, `evals/run/send/loop.py`, records it as `rejected_too_long` with a line per
cell), so no sample is measured at another length than its recipe says."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, Field

from ctxprobe.runners import launcher as machinery  # by its module, so a test can stand in for the engine
from ctxprobe.runners.launcher import EMBEDDED_MODE, check_gguf
from ctxprobe.runners.launchers.base import Launch, Launcher, launcher
from ctxprobe.runners.response import in_flight
from ctxprobe.runners.settings import EngineSettings

if TYPE_CHECKING:
    from ctxprobe.runners.served import Launched
    from ctxprobe.tasks.suite import Suite


class EmbeddedSettings(EngineSettings):
    """The embedded engine's options: how llama-server is started, and the GGUF it serves."""

    model_file: str | None = Field(None, description="embedded engine: serve this local GGUF instead of Gemma 3 270M")


def embedded_counter_spec(model_file: str | None) -> str:
    """The GGUF's own vocabulary, read offline where it can be (SentencePiece-style); else the engine's."""
    from ctxprobe.tasks.token_counter import PACKAGED_MODEL

    if not model_file:
        return f"local:{PACKAGED_MODEL}"
    from ctxprobe.tasks.gguf_counter import counts_offline

    return f"local:{model_file}" if counts_offline(Path(model_file)) else "server"


def default_n_ctx(suite: Suite) -> int:
    """The longest prompt plus room for the answer, rounded up to 256."""
    longest = max(max(t.lengths or suite.lengths) for t in suite.tasks)
    return -(-(longest + 512) // 256) * 256


def over_trained_context(requested: int | None, trained: int | None, allocated: int | None) -> str | None:
    """The one line for an `--n-ctx` (per slot) above the model's trained context, naming what llama-server
    allocated per slot; None when it is not above (or either is unknown)."""
    if not requested or not trained or requested <= trained:
        return None
    given = f"{allocated:,}" if allocated else "an unknown context"
    return (
        f"ctxprobe: --n-ctx {requested:,} is above the model's trained context of {trained:,}; llama-server "
        f"allocated {given} per slot"
    )


def _own(settings: BaseModel) -> EmbeddedSettings:
    assert isinstance(settings, EmbeddedSettings), settings
    return settings


@launcher
class LlamaCpp(Launcher):
    name = "llama.cpp"
    summary = "embedded, GGUF"
    group = "embedded engine"
    settings = EmbeddedSettings
    metavars: ClassVar[Mapping[str, str]] = {"model_file": "GGUF", "n_ctx": "N", "threads": "N"}
    rank = 10
    default_mode = EMBEDDED_MODE

    def check(self, settings: BaseModel) -> None:
        model_file = _own(settings).model_file
        if model_file:
            check_gguf(Path(model_file))

    def limit_settings(self, settings: BaseModel, max_length: int | None) -> BaseModel:
        """Started at --max-length, else at the model's trained context (the GGUF says it)."""
        own = _own(settings)
        if own.n_ctx is not None:
            return own
        from ctxprobe.tasks.gguf_vocab import trained_context
        from ctxprobe.tasks.token_counter import packaged_gguf

        n_ctx = max_length or trained_context(Path(own.model_file) if own.model_file else packaged_gguf())
        return own.model_copy(update={"n_ctx": n_ctx}) if n_ctx else own

    def slots(self, settings: BaseModel) -> int | None:
        return _own(settings).slots

    def start_context(self, settings: BaseModel) -> int | None:
        return _own(settings).n_ctx

    @contextlib.contextmanager
    def serve(self, launch: Launch) -> Iterator[Launched]:
        from ctxprobe.runners.chat_lead import with_chat_lead
        from ctxprobe.runners.retry import RetryPolicy
        from ctxprobe.runners.served import Launched, open_counter

        own, client = _own(launch.settings), launch.client
        policy = RetryPolicy.of(client)
        spec = launch.token_counter or embedded_counter_spec(own.model_file)
        offline = not spec.startswith("server")
        counter = open_counter(spec, endpoint=None, api_key_env=client.api_key_env) if offline else None  # fail fast
        settings: EngineSettings = own  # how llama-server is started (the GGUF it serves is given apart)
        if settings.n_ctx is None:  # sized to the suite
            settings = settings.model_copy(update={"n_ctx": default_n_ctx(launch.suite)})
        with machinery.EmbeddedEngine(own.model_file, settings=settings) as engine:
            info = engine.info()
            from ctxprobe.tasks.gguf_vocab import trained_context

            trained = trained_context(engine.model_path) if engine.model_path else None
            note = over_trained_context(settings.n_ctx, trained, info.context_length)
            if note:
                print(note, file=sys.stderr)
            info = info.model_copy(
                update={"context_requested": settings.n_ctx, "context_trained": trained, "threads": engine.threads}
            )
            if counter is None:  # the engine's own tokenizer, now that it runs
                spec = f"server:{engine.base_url}"
                counter = open_counter(
                    spec,
                    endpoint=engine.base_url,
                    api_key_env=client.api_key_env,
                    policy=policy,
                    concurrency=in_flight(launch.concurrency, settings.slots),
                    info=info,
                )
            else:  # counted offline; the chat template is the server's
                counter = with_chat_lead(
                    counter,
                    engine.base_url,
                    info.engine,
                    model=info.model,
                    api_key_env=client.api_key_env,
                    policy=policy,
                )
            # The launcher knows what suits its server; the user's flags win. Its model: the alias it serves.
            config = engine.endpoint_config(
                client, mode=launch.mode, concurrency=in_flight(launch.concurrency, engine.parallel)
            )
            yield Launched(config, info, spec, counter)
