"""`ctxprobe compare` of two real vLLM configurations on the same suite: KV cache auto against fp8
where the CPU has vLLM's fp8 kernels (AVX-512 or AMX), else against the same cache without prompt-token details."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.runners.vllm_engine import VllmEngine
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir

pytestmark = pytest.mark.vllm

SUITE = [
    "--family",
    "niah",
    "--lengths",
    "1k",
    "--depths",
    "0,50,100",
    "--samples",
    "1",
    "--mode",
    "completions",
    "--quiet",
]


def test_compare_two_vllm_configurations(details: VllmEngine, plain: VllmEngine, tmp_path: Path) -> None:
    folders = []
    other = f"kv-{plain.vllm.kv_cache_dtype}-plain"
    for label, engine in (("kv-auto", details), (other, plain)):
        results = tmp_path / label
        done = ctxprobe(
            "run", "--endpoint", engine.base_url, *SUITE, "--label", label, "--results-dir", str(results), timeout=900
        )
        assert done.returncode in (0, 1), done.stderr[-3000:]
        folders.append(only_run_dir(results))
    done = ctxprobe("compare", *map(str, folders), "--results-dir", str(tmp_path / "cmp"), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"baseline kv-auto  vs  candidate {other}" in done.stdout
    data = json.loads((only_run_dir(tmp_path / "cmp") / "compare.json").read_text())
    pairing = data["pairings"][0]
    errored = sum(pairing["errored_base"].values()) + sum(pairing["errored_cand"].values())
    assert pairing["by_prompt"] + errored == 3 and pairing["by_task"] == 0  # one tokenizer: identical prompts
    assert data["candidates"][0]["engine"]["engine"] == "vllm"
