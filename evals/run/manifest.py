"""The run manifest: what was run, against what, with which tokenizer — never a secret."""

from __future__ import annotations

import argparse
import re
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ctxprobe.runners.endpoint import EndpointConfig
from ctxprobe.tasks.suite import Suite

# Options a resumed run takes from the manifest unless given again on the command line.
_ENDPOINT_KEYS = ("endpoints", "model", "api_key_env", "mode", "concurrency", "timeout", "timeout_per_1k",
                  "retries", "token_counter", "model_file", "n_ctx", "kv_cache_type", "threads", "parallel")


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


def endpoint_options(args: argparse.Namespace, manifest: dict[str, Any] | None) -> dict[str, Any]:
    given = {
        "endpoints": args.endpoint or [], "model": args.model, "api_key_env": args.api_key_env, "mode": args.mode,
        "concurrency": args.concurrency, "timeout": args.timeout, "timeout_per_1k": args.timeout_per_1k,
        "retries": args.retries, "token_counter": args.token_counter, "model_file": args.model_file,
        "n_ctx": args.n_ctx, "kv_cache_type": args.kv_cache_type, "threads": args.threads,
        "parallel": args.parallel,
    }
    if manifest is None:
        return given
    saved = manifest.get("options", {})
    return {k: (given[k] if given[k] not in (None, [], "") and k != "api_key_env" else saved.get(k, given[k]))
            for k in _ENDPOINT_KEYS}


def run_folder(results_dir: Path, label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-")
    base = results_dir / (f"{stamp}-{safe}" if safe else stamp)
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def new_manifest(args: argparse.Namespace, suite: Suite, config: EndpointConfig, engine: dict[str, Any],
                 counter_spec: str, opts: dict[str, Any]) -> dict[str, Any]:
    saved = dict(opts)
    saved["endpoints"] = [public_url(u) for u in opts["endpoints"]]
    return {
        "ctxprobe_version": ctxprobe_version(),
        "created": time.time(),
        "label": args.label,
        "endpoints": [public_url(u) for u in config.base_urls],
        "model": config.model,
        "engine": engine,
        "mode": config.mode,
        "suite": suite.model_dump(mode="json"),
        "seeds": sorted({suite.seed + i for i in range(max(t.samples or suite.samples for t in suite.tasks))}),
        "token_counter": counter_spec,
        "api_key_env": config.api_key_env,
        "options": saved,
    }
