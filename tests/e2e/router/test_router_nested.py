"""A nested run through a real router: `ctxprobe run --endpoint ROUTER --layout nested` with vllm-router in
front of two embedded engines, with the policies users pick for prefix sharing (consistent_hash on the session
header ctxprobe sends, cache_aware on the prompt text). What must hold, from the engines' side:

- every chain's requests reach one engine: each request after a chain's first finds that chain's shared stream
  in the cache of the engine it reached (the chains share nothing but their instructions, so an engine that
  never saw the chain has a few dozen tokens cached, not hundreds), and each engine's own prompt-token counter
  (`/metrics`) is the sum of whole chains' computed tokens;
- the engines prefill each context token about once: the sum over the run of prompt tokens minus cached tokens
  is at most 1.3 x the floor (per chain its longest context plus every question).

consistent_hash logs its key and worker per request: there, every completion carries the chain's key in
X-Session-ID and each key goes to one worker, the worker whose counter holds that chain."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from ctxprobe.runners.launcher import EmbeddedEngine
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir
from tests.e2e.router.fleet import Router, RouterEnv, by_chain, counters_delta, engine_counters, prefill, read_records

pytestmark = pytest.mark.router

LENGTHS, DEPTHS, SEEDS = ("1k", "2k"), (0, 50, 100), 2
BOUND = 1.3  # computed tokens over the floor, at most
SLACK = 8  # tokens a cache hit may fall short of the shared stream (llama.cpp evaluates a prompt's last token)
SHARED_INSTRUCTIONS = 100  # more than the chains share with each other (their instructions: ~27 tokens here)
PROMPT_COUNTER = "llamacpp:prompt_tokens_total"  # tokens the engine prefilled (cached ones not counted)


def run_nested(endpoint: str, results: Path) -> Path:
    done = ctxprobe(
        "run",
        "--endpoint",
        endpoint,
        "--family",
        "niah",
        "--lengths",
        ",".join(LENGTHS),
        "--depths",
        ",".join(map(str, DEPTHS)),
        "--samples",
        str(SEEDS),
        "--layout",
        "nested",
        "--mode",
        "completions",
        "--no-logprobs",
        "--no-report",
        "--quiet",
        "--results-dir",
        str(results),
        "--cache-check",
        "off",  # the engines' counters are held against the run's own prefill
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return only_run_dir(results)


@pytest.mark.parametrize("policy", ["consistent_hash", "cache_aware"])
def test_nested_run_behind_router_keeps_each_chain_on_one_engine(
    policy: str, router_env: RouterEnv, two_engines: list[EmbeddedEngine], tmp_path: Path
) -> None:
    urls = [engine.base_url for engine in two_engines]
    with Router(router_env, urls, policy, tmp_path / "router.log") as router:
        before = {url: engine_counters(url) for url in urls}
        run_dir = run_nested(router.base_url, tmp_path / "results")
        prefilled = {url: counters_delta(before[url], engine_counters(url))[PROMPT_COUNTER] for url in urls}
        routes = router.routes()

    records = read_records(run_dir)
    assert len(records) == len(LENGTHS) * len(DEPTHS) * SEEDS
    assert all(r["error"] is None and r["response"]["cached_tokens"] is not None for r in records)
    chains = by_chain(records)
    assert len(chains) == SEEDS

    # Each request after a chain's first reached an engine holding the chain's stream so far (records are in
    # send order: the router reports one slot, so ctxprobe sends one request at a time).
    for key, chain in chains.items():
        seen = 0
        for i, record in enumerate(chain):
            stream = int(record["sample"]["measures"]["stream_tokens"])
            if i:
                shared = min(stream, seen)
                assert shared > SHARED_INSTRUCTIONS
                assert record["response"]["cached_tokens"] >= shared - SLACK, (
                    policy,
                    key,
                    i,
                    shared,
                    record["response"],
                )
            seen = max(seen, stream)

    # The engines' own counters: together they prefilled what the replies say (sent - cached), and each one's
    # share is a sum of whole chains.
    figures = prefill(records)
    assert sum(prefilled.values()) == figures.computed
    computed = {
        key: sum(r["response"]["prompt_tokens"] - r["response"]["cached_tokens"] for r in chain)
        for key, chain in chains.items()
    }
    placements = [dict(zip(computed, chosen)) for chosen in itertools.product(urls, repeat=len(computed))]
    fitting = [
        p
        for p in placements
        if all(sum(computed[k] for k, url in p.items() if url == engine) == prefilled[engine] for engine in urls)
    ]
    assert fitting, (prefilled, computed)

    # Each context token prefilled about once.
    assert figures.floor is not None and figures.computed <= BOUND * figures.floor, figures

    if policy == "consistent_hash":
        routed = {}
        for hash_key, worker in routes:
            if hash_key.startswith("header:x-session-id:"):
                routed.setdefault(hash_key.removeprefix("header:x-session-id:"), set()).add(worker)
        assert set(routed) == set(chains)
        assert all(len(workers) == 1 for workers in routed.values()), routed
        assert {key: workers.pop() for key, workers in routed.items()} in fitting
        n_header = sum(1 for hash_key, _ in routes if hash_key.startswith("header:x-session-id:"))
        assert n_header == len(records)  # every completion carried its chain's key (logprobs are off)
