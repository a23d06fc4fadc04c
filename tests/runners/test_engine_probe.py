"""probe_engine recognises each engine from the calls of docs/ENGINES.md."""

from __future__ import annotations

import socket

import pytest
from fake_engine import FakeEngine

from ctxprobe.runners.probe import probe_engine
from ctxprobe.runners.retry import DEFAULT_RETRIES, RetryPolicy
from ctxprobe.tasks.errors import UserError


@pytest.mark.parametrize(
    ("flavor", "version", "source"),
    [
        ("vllm", "0.33.0", "GET /v1/models max_model_len"),
        ("sglang", "0.5.23", "GET /v1/models max_model_len"),
        ("llama-server", "b7000-abc1234", "GET /props default_generation_settings.n_ctx (per slot)"),
    ],
)
def test_engines_that_state_their_context(flavor: str, version: str, source: str) -> None:
    with FakeEngine(flavor, model="org/m", context_length=32768) as engine:  # type: ignore[arg-type]
        info = probe_engine(engine.url + "/v1")
    assert info.engine == flavor
    assert info.version == version
    assert info.context_length == 32768
    assert info.context_source == source
    assert info.model == "org/m"
    assert info.base_url == engine.url


def test_llama_server_reports_slot_context_not_training_context() -> None:
    with FakeEngine("llama-server", context_length=4096, n_ctx_train=131072) as engine:
        assert probe_engine(engine.url).context_length == 4096


def test_llama_cpp_python_takes_what_the_launcher_knows() -> None:
    with FakeEngine("llama-cpp-python", model="gemma-3-270m") as engine:
        bare = probe_engine(engine.url)
        told = probe_engine(engine.url, n_ctx=8192, version="0.3.36")
    assert (bare.engine, bare.context_length, bare.context_source, bare.version) == (
        "llama-cpp-python",
        None,
        None,
        None,
    )
    assert (told.context_length, told.context_source, told.version) == (8192, "launcher n_ctx", "0.3.36")
    assert told.model == "gemma-3-270m"


def test_the_owned_by_hint_is_confirmed_by_the_engines_own_call() -> None:
    with FakeEngine("vllm") as engine:
        probe_engine(engine.url)
        paths = [r.path for r in engine.requests]
    assert paths == ["/v1/models", "/version", "/metrics"]  # the last for the block it reuses prefixes in


def test_info_is_a_frozen_serialisable_record() -> None:
    with FakeEngine("sglang") as engine:
        info = probe_engine(engine.url)
    assert info.model_dump()["engine"] == "sglang"
    with pytest.raises(ValueError):
        info.engine = "vllm"  # type: ignore[misc]


def test_unreachable_endpoint_is_one_user_error() -> None:
    """The default number of retries, with a short backoff: the backoff's length is tests/runners/test_retry.py's."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    quick = RetryPolicy(timeout_s=2, backoff_base_s=0.01, backoff_max_s=0.05)
    shown = rf"endpoint http://127.0.0.1:{port} is unreachable: .* \(after {DEFAULT_RETRIES + 1} attempts\)$"
    with pytest.raises(UserError, match=shown):
        probe_engine(f"http://127.0.0.1:{port}", policy=quick)


def test_llama_server_states_its_slots_and_concurrency_follows_them() -> None:
    with FakeEngine("llama-server", slots=3) as engine:
        info = probe_engine(engine.url)
    assert info.slots == 3 and info.default_concurrency == 3


@pytest.mark.parametrize("flavor", ["vllm", "sglang", "llama-cpp-python"])
def test_engines_without_slots_keep_the_default_concurrency(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        info = probe_engine(engine.url)
    assert info.slots is None and info.default_concurrency == 4


def test_a_version_the_caller_knows_replaces_the_stated_one() -> None:
    """The embedded wheel's build_info says b0-unknown; the launcher passes xllamacpp's version."""
    with FakeEngine("llama-server", version="b0-unknown") as engine:
        assert probe_engine(engine.url).version == "b0-unknown"
        assert probe_engine(engine.url, version="2026.10.11549").version == "2026.10.11549"
