"""The real embedded engine (llama-server from the xllamacpp wheel, serving Gemma 3 270M in a child
process) driven through ctxprobe's runners and the openai SDK."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxprobe.runners import launcher
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.runners.launcher import EmbeddedEngine, EngineStartError
from ctxprobe.runners.metrics import scrape_metrics
from ctxprobe.runners.response import ErrorKind, Response
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.tasks.token_counter import make_token_counter, packaged_gguf

pytestmark = pytest.mark.engine

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def small_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedEngine]:
    with EmbeddedEngine(n_ctx=2048, log_path=tmp_path_factory.mktemp("small") / "engine.log") as engine:
        yield engine


def send(config: EndpointConfig, prompt: str, planned_tokens: int = 10, max_tokens: int = 8) -> Response:
    async def once() -> Response:
        async with EndpointClient(config) as client:
            return await client.send(prompt, max_tokens=max_tokens, planned_tokens=planned_tokens, seed=1)

    return asyncio.run(once())


def test_a_streamed_completion_records_ttft_usage_and_cached_tokens(small_engine: EmbeddedEngine) -> None:
    config = small_engine.endpoint_config()
    assert config.stream
    first = send(config, PROMPT + " Paris, and the capital of Italy is")
    again = send(config, PROMPT + " Paris, and the capital of Italy is")
    assert first.text.strip() and first.ttft_s is not None and 0 < first.ttft_s <= first.latency_s
    assert first.prompt_tokens is not None and first.prompt_tokens > 5  # usage from the last chunk
    assert first.completion_tokens is not None and 0 < first.completion_tokens <= 8
    assert again.cached_tokens is not None and again.cached_tokens > 0  # the slot kept the prefix
    assert again.text == first.text and first.endpoint == small_engine.base_url


def test_the_local_counter_and_the_server_agree_with_the_reported_prompt_tokens(small_engine: EmbeddedEngine) -> None:
    server = ServerTokenizer(small_engine.base_url, "llama-server")
    local = make_token_counter("local:gemma3-270m")
    response = send(small_engine.endpoint_config(), PROMPT)
    assert server.bos_tokens == local.bos_tokens == 1
    assert server.count(PROMPT) + 1 == local.count_many([PROMPT])[0] + 1 == response.prompt_tokens
    assert server.token_ids(PROMPT) == local.token_ids(PROMPT)


def test_a_prompt_longer_than_n_ctx_is_rejected_too_long_while_streaming(small_engine: EmbeddedEngine) -> None:
    with pytest.raises(EndpointError) as caught:
        send(small_engine.endpoint_config(), "lorem ipsum " * 2000, planned_tokens=4000)
    assert caught.value.kind is ErrorKind.rejected_too_long
    assert caught.value.limit == 2048 and "limit 2048 tokens" in caught.value.detail
    assert caught.value.attempts == 1


def test_max_tokens_beyond_the_room_left_is_clamped(small_engine: EmbeddedEngine) -> None:
    tok = ServerTokenizer(small_engine.base_url, "llama-server")
    prompt = "word " * 2200
    prompt = prompt[: len(prompt) * (2048 - 20) // (tok.count(prompt) + 1)]
    response = send(small_engine.endpoint_config(), prompt, planned_tokens=2030, max_tokens=200)
    assert response.finish_reason == "length"
    assert response.prompt_tokens is not None and response.completion_tokens is not None
    assert response.completion_tokens < 200 and response.prompt_tokens + response.completion_tokens <= 2048


def test_probe_states_the_engine_slots_and_xllamacpps_version(small_engine: EmbeddedEngine) -> None:
    import xllamacpp

    info = small_engine.info()
    assert (info.engine, info.context_length, info.slots) == ("llama-server", 2048, 1)
    assert info.context_source == "GET /props default_generation_settings.n_ctx (per slot)"
    assert info.version == xllamacpp.__version__ and info.model == small_engine.model_alias
    metrics = scrape_metrics(small_engine.base_url, "llama-server")
    assert metrics is not None and metrics["prompt_tokens"] > 0


def test_n_ctx_is_per_slot_with_parallel_slots(tmp_path: Path) -> None:
    with EmbeddedEngine(n_ctx=1024, parallel=2, log_path=tmp_path / "engine.log") as engine:
        info = engine.info()
        assert (info.context_length, info.slots, info.default_concurrency) == (1024, 2, 2)
        config = engine.endpoint_config()
        assert config.concurrency == 2
        prompt = "word " * 1000  # about 1000 tokens: fits one slot's 1024

        async def both() -> list[Response]:
            async with EndpointClient(config) as client:
                return await asyncio.gather(
                    *(client.send(prompt + str(i), max_tokens=4, planned_tokens=1000, seed=i) for i in range(2))
                )

        assert all(r.prompt_tokens and 990 < r.prompt_tokens < 1024 for r in asyncio.run(both()))


def test_a_start_failure_quotes_llama_cpps_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(packaged_gguf().read_bytes()[:4096])  # a GGUF header cut short
    engine = EmbeddedEngine(broken, n_ctx=256, log_path=tmp_path / "engine.log", startup_timeout_s=60)
    with pytest.raises(EngineStartError) as caught:
        engine.start()
    message = str(caught.value)
    assert "\n" not in message and "Failed to init server" not in message
    assert message.startswith("the embedded engine could not start: ") and "(log: " in message
    assert "gguf" in message.lower() or "model" in message.lower()
    assert engine.process is None and not engine.running


def test_a_port_taken_before_binding_is_retried_on_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        ports = iter([taken])
        real = launcher._free_port
        monkeypatch.setattr(launcher, "_free_port", lambda: next(ports, None) or real())
        log = tmp_path / "engine.log"
        with EmbeddedEngine(n_ctx=512, log_path=log) as engine:
            assert engine.port != taken and send(engine.endpoint_config(), PROMPT).text
        assert f"port: {taken}" in log.read_text()  # the first try failed on the taken port


def test_the_process_is_gone_after_the_block(tmp_path: Path) -> None:
    with EmbeddedEngine(n_ctx=1024, log_path=tmp_path / "engine.log") as engine:
        assert engine.process is not None
        pid = engine.process.pid
        assert send(engine.endpoint_config(), PROMPT).text
        assert engine.ready_line() is not None
    assert not engine.running
    assert not os.path.exists(f"/proc/{pid}")


def test_ctrl_c_stops_the_engine(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), EmbeddedEngine(n_ctx=1024, log_path=tmp_path / "engine.log") as engine:
        assert engine.process is not None
        pid = engine.process.pid
        raise KeyboardInterrupt
    assert not os.path.exists(f"/proc/{pid}")


def test_session_engine_takes_a_prompt_over_2k(embedded_engine: EmbeddedEngine) -> None:
    response = send(embedded_engine.endpoint_config(), "lorem ipsum " * 1200 + PROMPT, planned_tokens=3000)
    assert response.prompt_tokens is not None and 2048 < response.prompt_tokens < 8192
    assert embedded_engine.n_ctx == 8192


def test_an_n_ctx_above_the_trained_context_is_said_with_what_was_allocated(capfd: pytest.CaptureFixture[str]) -> None:
    """The launcher as a run starts it, asked for twice the packaged model's trained context: llama-server
    caps each slot at that context, the line on stderr says so, and the engine facts keep all three."""
    from ctxprobe.runners.launchers.base import Launch
    from ctxprobe.runners.launchers.llama_cpp import EmbeddedSettings, LlamaCpp
    from ctxprobe.runners.settings import ClientSettings
    from ctxprobe.tasks.gguf_vocab import trained_context
    from ctxprobe.tasks.suite import Suite

    trained = trained_context(packaged_gguf())
    assert trained is not None
    suite = Suite(name="t", lengths=[1024], depths=[50.0], tasks=[{"family": "niah"}])
    launch = Launch(
        client=ClientSettings(),
        settings=EmbeddedSettings(n_ctx=2 * trained),
        token_counter=None,
        concurrency=None,
        mode="completions",
        suite=suite,
    )
    with LlamaCpp().serve(launch) as launched:
        info = launched.engine
    lines = [line for line in capfd.readouterr().err.splitlines() if "trained context" in line]
    assert lines == [
        f"ctxprobe: --n-ctx {2 * trained:,} is above the model's trained context of {trained:,}; "
        f"llama-server allocated {info.context_length:,} per slot"
    ]
    assert (info.context_requested, info.context_trained, info.context_length) == (2 * trained, trained, trained)
