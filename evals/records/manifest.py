"""The run manifest (`manifest.json`): what was run, against what, with which tokenizer, and how it
ended. Typed and versioned; older manifests stay readable. Never holds a secret."""

from __future__ import annotations

import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.evals.records.cache_check import CacheCheck
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion
from ctxprobe.runners.response import EngineInfo, LintLine, ReplicaEvent
from ctxprobe.tasks.suite import Suite

RunStatus = Literal["running", "finished", "interrupted", "endpoint_lost", "failed"]


class OrderDetail(BaseModel):
    """How the send order ran, summed over the batches a run sent (one per mode, per round). Cache-aware,
    a batch with fewer depth sweeps than lanes is fanned out: each sweep's deepest sample goes first, the
    rest of the sweep together once it is served, on the same replica; a batch holding a chain of the nested
    layout is not (a chain goes whole on one lane)."""

    model_config = ConfigDict(extra="ignore")

    order: str = Field(description="cache-aware or as-listed")
    lanes: int = Field(description="requests the run may keep in flight (--concurrency)")
    batches: int = Field(0, description="batches sent (modes, rounds)")
    sweeps: int = Field(
        0, description="sharing groups sent, over the batches (cache-aware: depth sweeps; as listed: one a sample)"
    )
    chains: int = Field(
        0,
        description="of the sharing groups, chains of the nested layout (each sent whole on one "
        "lane, in ascending length; never fanned out)",
    )
    samples: int = Field(0, description="samples the batches held")
    fanned_out: int = Field(0, description="batches whose sweeps were fanned out (fewer sweeps than lanes)")
    in_flight_reachable: int = Field(
        0, description="the most requests the order could keep in flight at once, over the batches (at most `lanes`)"
    )


class LogprobTotals(BaseModel):
    """What a run's answer probabilities cost and covered: samples measured (by method), not measurable
    (with why, in each record's `logprobs_detail`) or unavailable (the engine gives none), and the extra
    one-token requests and their prompt tokens (mostly served from the prefix cache)."""

    samples_measured: int = 0
    samples_unmeasured: int = 0
    samples_unavailable: int = 0
    methods: dict[str, int] = Field(default_factory=dict, description="measured samples by method")
    extra_requests: int = 0
    extra_prompt_tokens: int = 0
    top_logprobs: int | None = Field(None, description="alternatives kept per position")


class ReuseRecord(BaseModel):
    """The engine's prefix reuse held against what the run's layout and send order allow (evals/run/reuse.py):
    its cached prompt tokens as a share of the bound a one-slot prefix cache per lane reaches, and the prefill
    it computed against the floor that bound leaves."""

    model_config = ConfigDict(extra="ignore")

    prompt_tokens: int = Field(description="prompt tokens the engine reported over the answers counted")
    cached_tokens: int = Field(description="of them, served from its prefix cache (as it reported them)")
    bound_tokens: int = Field(
        description="the most a one-slot prefix cache per lane could serve in the run's "
        "layout and order (counted on the built prompts)"
    )
    share: float | None = Field(
        None, description="cached_tokens / bound_tokens (None where the layout and order let nothing be reused)"
    )
    computed_tokens: int = Field(description="prompt tokens the engine computed: prompt_tokens - cached_tokens")
    floor_tokens: int = Field(description="prompt tokens it must compute at least: prompt_tokens - bound_tokens")
    block: int | None = Field(
        None,
        description="the engine's reuse unit in tokens (it reuses whole blocks "
        "only), where it states one; the bound is rounded down to it",
    )
    engine_computed_tokens: int | None = Field(
        None,
        description="the prompt tokens the engine's own counters "
        "say it computed over the run, where it has such a counter and "
        "the answers were all it was sent",
    )
    timed_replies: int = Field(
        0,
        description="the answers counted whose replies carried the engine's own count "
        "of their prompt (llama-server's `timings`)",
    )
    timings_disagreed: int = Field(
        0,
        description="of them, those whose own count disagreed with their usage: "
        "cached plus computed is not the prompt tokens, or cached is not usage's",
    )
    timings_disagreement: str | None = Field(
        None, description="the first such reply: its sample id, and each number with where it was read"
    )
    below: bool = Field(
        False,
        description="the share fell below the documented share, or the computed prefill "
        "above the documented multiple of its floor: the run said why, in one line",
    )


class RunManifest(BaseModel):
    """One per run folder. `status` is `running` while samples are sent, then how the run ended."""

    model_config = ConfigDict(extra="ignore")

    schema_version: SchemaVersion = SCHEMA_VERSION
    command: str = "run"
    ctxprobe_version: str = "0+unknown"
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    status: RunStatus = "running"
    status_detail: str | None = Field(
        None, description="why the run ended so, where known (e.g. the file that could not be written)"
    )
    label: str = ""
    endpoints: list[str] = Field(default_factory=list, description="public URLs (no credentials, no query)")
    model: str | None = None
    engine: EngineInfo | None = Field(None, description="the engine probe's facts; None where nothing was probed")
    mode: str | None = None
    suite: Suite
    seeds: list[int] = Field(default_factory=list)
    tokenizer: str = Field("", description="the tokenizer identity every recipe names")
    token_counter: str = Field("", description="where the tokenizer was reached (a run option, not identity)")
    api_key_env: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    samples_planned: int | None = None
    samples_done: int | None = None
    samples_errored: int | None = None
    samples_count_off: int | None = Field(
        None,
        description="samples the server counted beyond the tolerance off "
        "their planned length (records' prompt_tokens_off)",
    )
    cache: dict[str, float] | None = Field(
        None,
        description="prompt tokens the server served from its prefix "
        "cache, their share, and the prefill seconds that saved",
    )
    cache_source: str | None = Field(
        None,
        description="where `cache` comes from: each reply's cached tokens, or "
        "the engine's /metrics prefix-cache counters where replies do not say",
    )
    engine_metrics: dict[str, float] | None = Field(
        None, description="the engine's /metrics counters over the run (deltas), where it exposes them"
    )
    stop: dict[str, Any] | None = Field(None, description="the stopping rule (`--stop decided`): its fields")
    fixed_grid_prompt_tokens: int | None = Field(
        None,
        description="prompt tokens the suite's fixed grid would "
        "spend (its samples per cell; `run --against`: every sample of the "
        "baseline, and of its extension, sent), counted at the nominal lengths",
    )
    prompt_tokens_sent: int | None = Field(None, description="planned prompt tokens of the samples sent")
    paired_gate: dict[str, Any] | None = Field(
        None,
        description="`run --against`: the baseline, margin, each row's verdict, difference, interval and pairs used",
    )
    replica_events: list[ReplicaEvent] | None = Field(
        None, description="replicas taken out of rotation (their connection failed) and put back, with when and why"
    )
    order_detail: OrderDetail | None = Field(
        None,
        description="how the send order ran: sweeps, lanes, "
        "whether sweeps were fanned out, the most requests it could keep in "
        "flight",
    )
    reuse: ReuseRecord | None = Field(
        None,
        description="the engine's prefix reuse against the layout's bound "
        "(None where replies carried no cached tokens)",
    )
    logprobs: LogprobTotals | None = Field(
        None, description="the answer probabilities' coverage and cost (None where the run did not ask for them)"
    )
    stopped_cells: dict[str, int] | None = Field(
        None, description="cells by why they stopped (above, below, precision, cap; open when the run ended first)"
    )
    deployment_lint: list[LintLine] | None = Field(
        None,
        description="the deployment lint's findings at the run's "
        "start, each naming its facts and where they were read "
        "(runners/deployment_lint.py); None where it was not run",
    )
    cache_check: CacheCheck | None = Field(
        None,
        description="the cache-path control: cold re-sends of requests "
        "served from the prefix cache, what differed per length, and the verdict "
        "(evals/compare/cache_path.py)",
    )

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_facts(cls, value: Any) -> Any:
        return engine_facts(value)


def engine_facts(value: Any) -> Any:
    """Engine facts as older files wrote them (a plain dict) made typed: `{}` is none probed, a dict without
    an `engine` (an lm-eval import's `harness`) names the harness instead."""
    if isinstance(value, dict):
        if not value:
            return None
        if "engine" not in value:
            return {
                **value,
                "engine": value.get("harness") or "unknown",
                "version": value.get("version") or value.get("lm_eval_version"),
            }
    return value


def ctxprobe_version() -> str:
    try:
        return version("ctxprobe")
    except PackageNotFoundError:
        return "0+unknown"


def public_url(url: str) -> str:
    """The URL without user:password@ and without a query string (which may carry a key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def saved_options(options: dict[str, Any]) -> dict[str, Any]:
    """Options as the manifest keeps them, by their flat names (JSON values, with an `endpoints` list of URLs,
    and a judge's): public URLs only."""
    saved = dict(options)
    saved["endpoints"] = [public_url(u) for u in saved.get("endpoints", [])]
    if saved.get("judge_endpoint"):
        saved["judge_endpoint"] = public_url(saved["judge_endpoint"])
    if "baseline_endpoint" in saved:
        saved["baseline_endpoint"] = [public_url(u) for u in saved["baseline_endpoint"]]
    return saved
