"""The engine's own counters over a run: `/metrics` scraped before and after (vLLM always; SGLang with
--enable-metrics; llama-server with --metrics), summed over replicas, stored in the manifest as deltas:
prefix-cache queries and hits, cached prompt tokens, TTFT sum and count, spec-decode accepted and draft
tokens (the MTP acceptance rate that long contexts can change). Gauges keep their value at the end."""

from __future__ import annotations

from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.tasks.errors import UserError

GAUGES = ("kv_cache_usage", "cache_hit_rate", "spec_accept_rate", "requests_processing", "requests_deferred")


def scrape(config: EndpointConfig, engine: str) -> dict[str, float] | None:
    """ctxprobe's metric names -> values summed over the replicas; None where the engine exposes none."""
    from ctxprobe.runners.metrics import scrape_metrics

    total: dict[str, float] = {}
    for url in config.base_urls:
        try:
            found = scrape_metrics(url, engine, api_key_env=config.api_key_env, policy=config.retry_policy)
        except UserError:  # metrics are a bonus: a run never fails for them
            return None
        if found is None:
            return None
        for name, value in found.items():
            total[name] = total.get(name, 0.0) + value
    return total


SAMPLES_SOURCE = "each reply's usage.prompt_tokens_details.cached_tokens"
METRICS_SOURCE = (
    "the engine's /metrics over the run (prefix-cache hits of queried prompt tokens); the replies "
    "did not say their cached tokens"
)


def cache_from_metrics(counters: dict[str, float] | None) -> dict[str, float] | None:
    """The run's prefix-cache use from the engine's own counters (deltas over the run), where replies carry
    no cached tokens (vLLM without --enable-prompt-tokens-details): prompt tokens looked up, tokens hit."""
    if not counters or not counters.get("prefix_cache_queries"):
        return None
    queried = counters["prefix_cache_queries"]
    hits = counters.get("prefix_cache_hits", counters.get("cached_prompt_tokens", 0.0))
    return {"prompt_tokens": queried, "cached_tokens": hits, "cached_share": hits / queried}


def deltas(before: dict[str, float] | None, after: dict[str, float] | None) -> dict[str, float] | None:
    """Counters as after - before, gauges as after; derived rates where both parts are there."""
    if before is None or after is None:
        return None
    out = {name: (value if name in GAUGES else value - before.get(name, 0.0)) for name, value in after.items()}
    if out.get("spec_draft_tokens"):
        out["spec_acceptance_rate"] = out.get("spec_accepted_tokens", 0.0) / out["spec_draft_tokens"]
    if out.get("prefix_cache_queries"):
        out["prefix_cache_hit_rate"] = out.get("prefix_cache_hits", 0.0) / out["prefix_cache_queries"]
    if out.get("ttft_seconds_count"):
        out["ttft_mean_seconds"] = out.get("ttft_seconds_sum", 0.0) / out["ttft_seconds_count"]
    return out
