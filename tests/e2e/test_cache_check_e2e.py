"""The cache-path control on the real embedded engine (llama-server from the xllamacpp wheel, Gemma 3 270M,
f16 KV, full SWA cache): a nested run's requests served from the prefix cache, sent again with
`cache_prompt: false`, are prefilled cold (the engine reports 0 cached tokens for them, where the run's own
requests reported hundreds) and the control does not call a healthy engine faulty."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.records.cache_check import read_checks
from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine


def test_cold_re_sends_on_llama_server_are_cold_and_agree(embedded_engine: EmbeddedEngine, tmp_path: Path) -> None:
    done = ctxprobe.run(
        endpoints=[embedded_engine.base_url],
        mode="completions",
        family="niah",
        lengths="1k,2k",
        depths="0,100",
        samples=1,
        layout="nested",
        cache_check="1",
        logprobs=False,
        results_dir=str(tmp_path),
        no_report=True,
        quiet=True,
    )
    assert done.exit_code == 0, done.message
    control = load_run(done.run_dir).manifest.cache_check
    assert control is not None and control.how == "cache_prompt: false"
    assert control.checked == control.chosen == 3 and control.unchecked == 0  # every request after the chain's first
    assert control.verdict in ("agrees", "differs") and control.verdict != "fault"
    checks = list(read_checks(done.run_dir).values())
    assert len(checks) == 3
    assert all(c.cold_cached_tokens == 0 and (c.cached_tokens or 0) > 500 for c in checks)  # cold, against cached
    print(f"cache path on Gemma: {control.line()}")
