"""`--engine vllm`: vLLM's OpenAI server (runners/vllm_engine.py) serving a model folder. Once it answers, a
run talks to it as to a remote endpoint (`as_remote`): counted by its own tokenizer, in chat mode unless told
(it serves a model folder with its chat template), requests in flight as the probe advises."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar

from ctxprobe.runners.launchers.base import Launch, Launcher, launcher
from ctxprobe.runners.settings import VllmSettings

if TYPE_CHECKING:
    from ctxprobe.runners.served import Launched


@launcher
class Vllm(Launcher):
    name = "vllm"
    summary = "vLLM's OpenAI server, a model folder"
    group = "vLLM engine (--engine vllm)"
    settings = VllmSettings
    metavars: ClassVar[Mapping[str, str]] = {
        "model_dir": "DIR",
        "vllm_python": "PATH",
        "max_model_len": "N",
        "tensor_parallel_size": "N",
        "vllm_args": "ARGS",
        "kv_cache_dtype": "DTYPE",
    }
    rank = 20
    default_mode = "chat"

    @contextlib.contextmanager
    def serve(self, launch: Launch) -> Iterator[Launched]:
        from ctxprobe.runners.retry import RetryPolicy
        from ctxprobe.runners.served import as_remote
        from ctxprobe.runners.vllm_engine import VllmEngine

        settings = launch.settings
        assert isinstance(settings, VllmSettings), settings
        client = launch.client
        with VllmEngine(settings=settings, model_alias=client.model) as vllm:
            info = vllm.info()
            yield as_remote(
                client.model_copy(update={"model": vllm.model_alias}),
                [vllm.base_url],
                info,
                RetryPolicy.of(client),
                launch.mode,
                concurrency=launch.concurrency,
                token_counter=launch.token_counter,
            )
