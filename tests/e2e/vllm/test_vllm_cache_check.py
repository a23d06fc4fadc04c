"""The cache-path control on the real vLLM (CPU build, SmolLM2-135M-Instruct, prompt-token details on): a
nested run's requests served from the prefix cache, sent again with a fresh `cache_salt` each, report 0 cached
tokens (the run's own reported whole cached blocks), agree with the cached answers, and their answer
distributions stay within the KL noise floor of the cached ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.compare.cache_path import KL_NOISE_FLOOR
from ctxprobe.evals.records.cache_check import read_checks
from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.vllm_engine import VllmEngine
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir

pytestmark = pytest.mark.vllm


def test_salted_re_sends_are_cold_and_agree(details: VllmEngine, tmp_path: Path) -> None:
    done = ctxprobe(
        "run",
        "--endpoint",
        details.base_url,
        "--family",
        "niah",
        "--mode",
        "completions",
        "--lengths",
        "1k,1536",
        "--depths",
        "0,100",
        "--samples",
        "1",
        "--layout",
        "nested",
        "--cache-check",
        "1",
        "--logprobs",
        "--quiet",
        "--no-report",
        "--results-dir",
        str(tmp_path),
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    folder = only_run_dir(tmp_path)
    control = load_run(folder).manifest.cache_check
    assert control is not None and control.how.startswith("cache_salt") and control.checked == 3
    assert control.verdict != "fault"
    checks = list(read_checks(folder).values())
    assert all(c.cold_cached_tokens == 0 and (c.cached_tokens or 0) > 0 for c in checks)
    kls = [c.kl for c in checks if c.kl is not None]
    assert all(kl < KL_NOISE_FLOOR for kl in kls)
    print(f"cache path on vLLM: {control.line()}; KL per check {kls}")
