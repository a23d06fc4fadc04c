"""A run says the deployment lint's findings at its start, one line each, and keeps them in its manifest; a
bad `--config` is one line and exit 2 before anything starts (fake vLLM servers stating each case)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.load import load_run
from tests.runners.fake_engine import FakeEngine

QWEN = Path("tests/runners/fixtures/model_configs/qwen2_5_7b_instruct.json")


def _run(url: str, tmp_path: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--endpoint",
            url,
            "--family",
            "niah",
            "--lengths",
            "1k",
            "--depths",
            "50",
            "--samples",
            "1",
            "--quiet",
            "--results-dir",
            str(tmp_path / "runs"),
            *extra,
        ]
    )


def test_a_run_says_each_finding_once_and_its_manifest_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({**json.loads(QWEN.read_text()), "max_position_embeddings": 512, "sliding_window": None})
    )
    with FakeEngine("vllm", context_length=8192, answer="The number is 1.") as engine:
        assert _run(engine.url, tmp_path, "--config", str(config)) == 0  # a finding does not stop the run
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("ctxprobe: lint: ")]
    assert len(lines) == 2, err
    assert "the served context 8,192 (GET /v1/models max_model_len) is above the model's 512 positions" in lines[0]
    assert "longest length 1,024 is above the model's trained context 512" in lines[1]
    manifest = load_run(next((tmp_path / "runs").iterdir())).manifest
    assert manifest.deployment_lint is not None
    assert [line.rule for line in manifest.deployment_lint] == ["served_over_positions", "trained_below_suite"]
    assert f"config.json ({config}) max_position_embeddings" in manifest.deployment_lint[0].sources


def test_a_sound_deployment_has_no_lint_line_and_an_empty_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=8192, answer="The number is 1.") as engine:
        assert _run(engine.url, tmp_path, "--config", str(QWEN)) == 0
    assert "lint:" not in capsys.readouterr().err
    assert load_run(next((tmp_path / "runs").iterdir())).manifest.deployment_lint == []


def test_a_config_that_cannot_be_read_is_one_line_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        assert _run(engine.url, tmp_path, "--config", str(tmp_path / "missing.json")) == 2
        assert not engine.completion_calls()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.json" in err[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
