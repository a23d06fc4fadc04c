"""`ctxprobe doctor` and a wrong `--model` against a real vLLM server."""

from __future__ import annotations

import pytest

from ctxprobe.runners.vllm_engine import VllmEngine
from tests.e2e.ctxprobe_cli import ctxprobe
from tests.e2e.vllm.conftest import MAX_MODEL_LEN, SERVED_NAME

pytestmark = pytest.mark.vllm


def test_doctor_passes_every_check(details: VllmEngine) -> None:
    done = ctxprobe("doctor", details.base_url, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    out = done.stdout
    assert f"vllm 0.32.0; model {SERVED_NAME}" in out and f"{MAX_MODEL_LEN:,} tokens (GET /v1/models" in out
    lines = {
        line.split()[0]: line for line in out.splitlines()[1:] if line.strip() and not line.strip().startswith("->")
    }
    assert "failed" not in out and "missing" not in lines.get("completions", "")
    assert "cached" in lines["completions"] and "mode: --mode chat fits this endpoint" in out


def test_doctor_names_a_model_the_server_does_not_serve(details: VllmEngine) -> None:
    done = ctxprobe("doctor", "--model", "nosuch", details.base_url, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "'nosuch' is not served" in done.stdout and f"--model {SERVED_NAME}" in done.stdout
    assert "--mode " not in done.stdout


def test_run_names_a_model_the_server_does_not_serve(details: VllmEngine) -> None:
    done = ctxprobe(
        "run",
        "--endpoint",
        details.base_url,
        "--model",
        "nosuch",
        "--family",
        "niah",
        "--lengths",
        "1k",
        "--samples",
        "1",
        "--quiet",
        timeout=600,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    err = done.stderr.strip().splitlines()[-1]
    assert "'nosuch' is not served" in err and SERVED_NAME in err and "--mode " not in err and "chat mode" not in err
