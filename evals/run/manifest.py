"""The run manifest (`manifest.json`): what was run, against what, with which tokenizer, and how it
ended. Typed and versioned; older manifests stay readable. Never holds a secret."""

from __future__ import annotations

import re
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.evals.run.options import EndpointOptions
from ctxprobe.evals.run.schema import SCHEMA_VERSION
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.suite import Suite


RunStatus = Literal["running", "finished", "interrupted", "endpoint_lost", "failed"]


class RunManifest(BaseModel):
    """One per run folder. `status` is `running` while samples are sent, then how the run ended."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = SCHEMA_VERSION
    command: str = "run"
    ctxprobe_version: str = "0+unknown"
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    status: RunStatus = "running"
    label: str = ""
    endpoints: list[str] = Field(default_factory=list, description="public URLs (no credentials, no query)")
    model: str | None = None
    engine: dict[str, Any] = Field(default_factory=dict, description="the engine probe's facts")
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
    cache: dict[str, float] | None = Field(None, description="prompt tokens the server served from its prefix "
                                           "cache, their share, and the prefill seconds that saved")
    engine_metrics: dict[str, float] | None = Field(None, description="the engine's /metrics counters over the run "
                                                    "(deltas), where it exposes them")



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


def saved_options(options: EndpointOptions) -> dict[str, Any]:
    """The options as the manifest keeps them: public URLs only."""
    saved = options.model_dump(mode="json")
    saved["endpoints"] = [public_url(u) for u in options.endpoints]
    return saved


def run_folder(results_dir: Path, label: str) -> Path:
    """A new, not yet existing folder `results_dir/<time>-<label>`; `results_dir` must be usable."""
    for parent in (results_dir, *results_dir.parents):
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"results folder {results_dir} cannot be made: {parent} is a file")
            break
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-")
    base = results_dir / (f"{stamp}-{safe}" if safe else stamp)
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path
