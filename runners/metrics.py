"""The engine's Prometheus counters (`GET /metrics`), under ctxprobe's names: each engine adapter maps
its metric names (docs/ENGINES.md) to ours, e.g. `cached_prompt_tokens` is vLLM's
`vllm:prompt_tokens_cached_total` and llama-server's `llamacpp:prompt_tokens_cached_total`. The scrape
carries the API key like every other call. Samples of one metric with different labels are summed."""

from __future__ import annotations

import math
import re

from ctxprobe.runners.engines import adapter
from ctxprobe.runners.http_json import EndpointCalls, display_url
from ctxprobe.runners.retry import RetryPolicy
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.tasks.errors import UserError

_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)")


def parse_prometheus(text: str) -> dict[str, float]:
    """Metric name -> value (summed over label sets) from the Prometheus text format."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if match is None or line.startswith("#"):
            continue
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        if not math.isnan(value):
            values[match.group(1)] = values.get(match.group(1), 0.0) + value
    return values


def scrape_metrics(
    base_url: str,
    engine: str,
    *,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    timeout_s: float = 10.0,
    policy: RetryPolicy | None = None,
) -> dict[str, float] | None:
    """ctxprobe's metric name -> value, for the names the engine exports; None where the engine has no
    metrics or they are switched off (an answer other than 200)."""
    names = adapter(engine).metrics
    if not names:
        return None
    calls = EndpointCalls(base_url, policy=policy, timeout_s=None if policy else timeout_s, api_key_env=api_key_env)
    status, body = calls.send("GET", "/metrics")
    if status != 200:
        return None
    if not isinstance(body, str):
        raise UserError(f"GET /metrics at {display_url(base_url)} did not answer in the Prometheus text format")
    found = parse_prometheus(body)
    return {ours: found[theirs] for ours, theirs in names.items() if theirs in found}
