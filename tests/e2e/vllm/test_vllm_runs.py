"""Runs against a real vLLM server: exact prompt lengths in chat and completions mode, cached tokens with
prompt-token details on and the cache-aware order's share against the bound 128-token blocks allow, and
the /metrics fallback of the cache share without them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.run.engine_metrics import METRICS_SOURCE, SAMPLES_SOURCE
from ctxprobe.runners.http_json import request_json
from ctxprobe.runners.vllm_engine import VllmEngine
from ctxprobe.tasks.build import build_sample
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir
from tests.e2e.vllm.conftest import SERVED_NAME

pytestmark = pytest.mark.vllm

BLOCK = 128  # vLLM's prefix cache holds whole blocks of this many tokens (its CPU default)


def run(url: str, results: Path, *args: str) -> Path:
    done = ctxprobe(
        "run", "--endpoint", url, "--family", "niah", "--quiet", "--results-dir", str(results), *args, timeout=900
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return only_run_dir(results)


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_prompts_are_served_at_their_planned_length(details: VllmEngine, tmp_path: Path, mode: str) -> None:
    folder = run(
        details.base_url, tmp_path, "--mode", mode, "--lengths", "1k,1536", "--depths", "0,50,100", "--samples", "1"
    )
    records = load_run(folder).records
    assert len(records) == 6 and all(r.error is None for r in records), [r.error_detail for r in records]
    assert all(r.sample.recipe.mode == mode for r in records)
    assert [r.response.prompt_tokens for r in records] == [r.sample.planned_tokens for r in records]  # type: ignore[union-attr]
    assert {r.sample.recipe.context_tokens for r in records} == {1024, 1536}


def _token_ids(url: str, prompt: str) -> list[int]:
    status, body = request_json(
        "POST", f"{url}/tokenize", {"model": SERVED_NAME, "prompt": prompt, "add_special_tokens": True}, timeout_s=60
    )
    assert status == 200
    return list(body["tokens"])


def _shared(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def test_cached_tokens_reach_the_bound_of_whole_blocks(details: VllmEngine, tmp_path: Path) -> None:
    """One request at a time in the cache-aware order: each prompt's cached tokens are the whole 128-token
    blocks it shares with a prompt sent before it (its longest shared prefix, rounded down; never its last
    token), computed here from the server's own token ids of every prompt."""
    from ctxprobe.runners.server_tokenizer import server_token_counter

    status, _ = request_json("POST", f"{details.base_url}/reset_prefix_cache", None, timeout_s=60)
    assert status == 200  # nothing another test sent is cached
    folder = run(
        details.base_url,
        tmp_path,
        "--mode",
        "completions",
        "--lengths",
        "1k",
        "--depths",
        "0,25,50,75,100",
        "--samples",
        "2",
        "--concurrency",
        "1",
        "--order",
        "cache-aware",
    )
    loaded = load_run(folder)
    manifest: Any = loaded.manifest
    assert manifest.cache_source == SAMPLES_SOURCE
    counter = server_token_counter(details.base_url)
    records = sorted(loaded.records, key=lambda r: r.finished_at)  # one at a time: the order sent
    seen: list[list[int]] = []
    bound = 0
    for record in records:
        ids = _token_ids(details.base_url, build_sample(record.sample.recipe, counter).prompt)
        assert len(ids) == record.response.prompt_tokens  # type: ignore[union-attr]
        longest = max((_shared(ids, earlier) for earlier in seen), default=0)
        expected = min(longest, len(ids) - 1) // BLOCK * BLOCK
        assert record.response.cached_tokens == expected, (record.sample.sample_id, longest)  # type: ignore[union-attr]
        bound += expected
        seen.append(ids)
    prompt = sum(r.response.prompt_tokens for r in records)  # type: ignore[union-attr,misc]
    assert bound > 0 and manifest.cache["cached_tokens"] == bound
    assert manifest.cache["cached_share"] == pytest.approx(bound / prompt)


def test_without_prompt_token_details_the_cache_share_comes_from_metrics(plain: VllmEngine, tmp_path: Path) -> None:
    folder = run(
        plain.base_url,
        tmp_path,
        "--mode",
        "completions",
        "--lengths",
        "1k",
        "--depths",
        "0,50,100",
        "--samples",
        "2",
        "--concurrency",
        "1",
    )
    data = json.loads((folder / "manifest.json").read_text())
    assert all(r.response.cached_tokens is None for r in load_run(folder).records)  # type: ignore[union-attr]
    metrics = data["engine_metrics"]
    assert data["cache_source"] == METRICS_SOURCE and metrics["prefix_cache_hits"] > 0
    assert data["cache"] == {
        "prompt_tokens": metrics["prefix_cache_queries"],
        "cached_tokens": metrics["prefix_cache_hits"],
        "cached_share": metrics["prefix_cache_hit_rate"],
    }
