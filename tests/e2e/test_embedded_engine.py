"""The real embedded engine (llama-cpp-python serving Gemma 3 270M) driven through ctxprobe's runners."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxprobe.evals.run.record import ErrorKind, Response
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.tokenize import ServerTokenizer

pytestmark = pytest.mark.engine

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def small_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedEngine]:
    with EmbeddedEngine(n_ctx=2048, log_path=tmp_path_factory.mktemp("small") / "engine.log") as engine:
        yield engine


def send(config: EndpointConfig, prompt: str, planned_tokens: int = 10) -> Response:
    async def once() -> Response:
        async with EndpointClient(config) as client:
            return await client.send(prompt, max_tokens=8, planned_tokens=planned_tokens, seed=1)

    return asyncio.run(once())


def test_one_completion_reports_usage_and_latency(small_engine: EmbeddedEngine) -> None:
    response = send(small_engine.endpoint_config(), PROMPT)
    assert response.text.strip()
    assert response.prompt_tokens is not None and response.prompt_tokens > 0
    assert response.completion_tokens is not None and 0 < response.completion_tokens <= 8
    assert response.latency_s > 0
    assert response.endpoint == small_engine.base_url


def test_server_tokenizer_matches_the_reported_prompt_tokens(small_engine: EmbeddedEngine) -> None:
    tok = ServerTokenizer(small_engine.base_url, "llama-cpp-python")
    response = send(small_engine.endpoint_config(), PROMPT)
    assert tok.adds_bos and tok.bos_tokens == 1
    assert tok.count(PROMPT) + tok.bos_tokens == response.prompt_tokens
    assert tok.count_many([PROMPT, "", PROMPT + " Paris."]) == [tok.count(PROMPT), 0, tok.count(PROMPT + " Paris.")]


def test_a_prompt_longer_than_n_ctx_is_rejected_too_long(small_engine: EmbeddedEngine) -> None:
    with pytest.raises(EndpointError) as caught:
        send(small_engine.endpoint_config(), "lorem ipsum " * 2000, planned_tokens=4000)
    assert caught.value.kind is ErrorKind.rejected_too_long
    assert "limit 2048 tokens" in caught.value.detail
    assert caught.value.attempts == 1


def test_streaming_hides_usage_and_the_too_long_error(small_engine: EmbeddedEngine) -> None:
    """Why the embedded engine is used without streaming: its stream has no usage, and a too-long prompt
    ends the stream with nothing instead of a 400."""
    config = small_engine.endpoint_config(stream=True)
    response = send(config, PROMPT)
    assert response.prompt_tokens is None and response.ttft_s is not None
    with pytest.raises(EndpointError) as caught:
        send(config, "lorem ipsum " * 2000, planned_tokens=4000)
    assert caught.value.kind is ErrorKind.empty


def test_probe_reports_the_launchers_n_ctx(small_engine: EmbeddedEngine) -> None:
    info = small_engine.info()
    assert (info.engine, info.context_length, info.context_source) == ("llama-cpp-python", 2048, "launcher n_ctx")
    assert info.model == small_engine.model_alias and info.version


def test_the_process_is_gone_after_the_block(tmp_path: Path) -> None:
    with EmbeddedEngine(n_ctx=2048, log_path=tmp_path / "engine.log") as engine:
        assert engine.process is not None
        pid = engine.process.pid
        assert send(engine.endpoint_config(), PROMPT).text
    assert not engine.running
    assert not os.path.exists(f"/proc/{pid}")
    assert (tmp_path / "engine.log").stat().st_size > 0  # its output went to the log


def test_ctrl_c_stops_the_engine(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        with EmbeddedEngine(n_ctx=2048, log_path=tmp_path / "engine.log") as engine:
            assert engine.process is not None
            pid = engine.process.pid
            raise KeyboardInterrupt
    assert not os.path.exists(f"/proc/{pid}")


def test_session_engine_takes_a_prompt_over_2k(embedded_engine: EmbeddedEngine) -> None:
    response = send(embedded_engine.endpoint_config(), "lorem ipsum " * 1200 + PROMPT, planned_tokens=3000)
    assert response.prompt_tokens is not None and 2048 < response.prompt_tokens < 8192
    assert embedded_engine.n_ctx == 8192
