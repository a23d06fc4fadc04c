"""Real-engine fixtures: one embedded llama-cpp-python engine for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxprobe.runners.launcher import EmbeddedEngine


@pytest.fixture(scope="session")
def embedded_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedEngine]:
    """The packaged Gemma 3 270M served with n_ctx 8192, started once and stopped at the end."""
    log = tmp_path_factory.mktemp("embedded-engine") / "engine.log"
    with EmbeddedEngine(n_ctx=8192, log_path=log) as engine:
        yield engine
