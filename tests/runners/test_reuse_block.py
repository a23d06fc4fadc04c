"""The unit an engine reuses a cached prefix in, as its /metrics states it (vLLM's `vllm:cache_config_info`,
captured from a real vLLM 0.32 server in tests/runners/fixtures/vllm/)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxprobe.runners.engines import adapter

FIXTURES = Path(__file__).parent / "fixtures" / "vllm"


def captured_metrics() -> str:
    body = json.loads((FIXTURES / "details" / "metrics_before.json").read_text())["body"]
    assert "vllm:cache_config_info{" in body
    return str(body)


def test_vllm_states_its_block() -> None:
    assert adapter("vllm").states_reuse_block
    assert adapter("vllm").reuse_block(captured_metrics()) == 128  # block_size="128" on the CPU backend


def test_a_set_alignment_wins_over_the_block() -> None:
    text = captured_metrics().replace('cache_hit_alignment_tokens="None"', 'cache_hit_alignment_tokens="528"')
    assert adapter("vllm").reuse_block(text) == 528


def test_nothing_stated_is_none() -> None:
    assert adapter("vllm").reuse_block("vllm:num_requests_running 0\n") is None
    assert not adapter("llama-server").states_reuse_block  # it reuses any number of tokens
    assert adapter("llama-server").reuse_block(captured_metrics()) is None
