"""A fleet as users deploy one: PyPI `vllm-router` in front of several embedded engines (llama.cpp's server from
the xllamacpp wheel), and the figures that say whether a run kept its prefix sharing behind it.

Why it matters: a router that spreads the requests of one chain (a nested layout's task and seed: every length
and depth) over several engines makes each engine prefill that chain's context again, and a nightly's prefill
is then a multiple of its floor. The figures come from the engines' side, never from the router's word alone:
each reply's cached tokens (ctxprobe records them per sample), and each engine's own counters (`/metrics`).
The router's log says where it sent each request (consistent_hash logs its key and the worker at level info),
which names the worker a chain went to.

Used by the router tier (tests/e2e/router/) and by benchmarks/bench_nested_prefill.py. The router's facts
(flags, policies, what it proxies) are in docs/ENGINES.md, "Router"."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ctxprobe.runners.launcher import _free_port
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.sample import Recipe

ENV_VAR = "CTXPROBE_ROUTER_ENV"
POLICIES = ("consistent_hash", "cache_aware", "round_robin")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ROUTED = re.compile(r"Consistent hash routing: key='(?P<key>.*)' -> worker='(?P<worker>[^']+)'")


@dataclass(frozen=True)
class RouterEnv:
    binary: str
    version: str


def read_router_env() -> RouterEnv | str:
    """The router named by the file $CTXPROBE_ROUTER_ENV points at (.ci/router_env.sh writes it), or the
    one-line reason it cannot be used."""
    where = os.environ.get(ENV_VAR)
    if not where:
        return f"${ENV_VAR} is not set (.ci/router_env.sh installs vllm-router and writes that file)"
    path = Path(where)
    if not path.is_file():
        return f"no router env at {path}: .ci/router_env.sh did not finish (vllm-router could not install here?)"
    values = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    binary = values.get("ROUTER_BIN", "")
    if not os.access(binary, os.X_OK):
        return f"{path} names no runnable vllm-router ({binary!r})"
    return RouterEnv(binary=binary, version=values.get("ROUTER_VERSION", "?"))


def _get(url: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return str(reply.read().decode())


class Router:
    """`vllm-router` on a loopback port in front of `workers` (their base URLs) with one policy, its log (level
    info) in `log_path`. A context manager: started on entry (ready once it answers `GET /v1/models`, which it
    proxies to a worker), stopped on exit."""

    def __init__(
        self, env: RouterEnv, workers: Sequence[str], policy: str, log_path: Path, *, startup_timeout_s: float = 60.0
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy {policy!r}: one of {', '.join(POLICIES)}")
        self.env, self.workers, self.policy, self.log_path = env, list(workers), policy, log_path
        self.startup_timeout_s = startup_timeout_s
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            self.env.binary,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--worker-urls",
            *self.workers,
            "--policy",
            self.policy,
            # its own Prometheus listener defaults to port 29000: two routers (or a second run) would clash
            "--prometheus-port",
            str(_free_port()),
            # the default waits 30 s between checks of the workers' /health at start-up
            "--worker-startup-check-interval",
            "1",
            "--log-level",
            "info",
        ]

    def __enter__(self) -> Router:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vllm-router exited with {self.process.returncode}: {self.log_tail()}")
            try:
                _get(f"{self.base_url}/v1/models", timeout=2.0)
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"vllm-router did not answer within {self.startup_timeout_s:g} s: {self.log_tail()}")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_text(self) -> str:
        return _ANSI.sub("", self.log_path.read_text(errors="replace")) if self.log_path.is_file() else ""

    def log_tail(self, lines: int = 5) -> str:
        return " | ".join(self.log_text().strip().splitlines()[-lines:])

    def routes(self) -> list[tuple[str, str]]:
        """(hash key, worker URL) of every request consistent_hash routed, in order (its info lines)."""
        return [(m["key"], m["worker"]) for m in _ROUTED.finditer(self.log_text())]


def engine_counters(base_url: str) -> dict[str, float]:
    """An engine's `llamacpp:*` counters from its `/metrics` (the embedded engine turns the endpoint on)."""
    out: dict[str, float] = {}
    for line in _get(f"{base_url}/metrics").splitlines():
        if line.startswith("llamacpp:"):
            name, _, value = line.partition(" ")
            out[name] = float(value)
    return out


def counters_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: after[name] - before.get(name, 0.0) for name in after}


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    """The run's sample records, in the order they were written."""
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines() if line.strip()]


def record_chain(record: dict[str, Any]) -> str:
    """The record's chain: `tasks.identity.chain_key` of its recipe (the X-Session-ID value ctxprobe sends)."""
    return chain_key(Recipe.model_validate(record["sample"]["recipe"]))


@dataclass(frozen=True)
class Prefill:
    """One run's prompt tokens: sent (the engines' usage.prompt_tokens), cached (their cached tokens), computed
    (sent - cached: what the engines prefilled) and the floor (per chain its longest context plus every
    question: each context token prefilled once)."""

    samples: int
    chains: int
    sent: int
    cached: int
    floor: int | None

    @property
    def computed(self) -> int:
        return self.sent - self.cached

    @property
    def ratio(self) -> float | None:
        return self.computed / self.floor if self.floor else None


def chain_floor(records: Sequence[dict[str, Any]]) -> int | None:
    """One nested chain's floor: its longest shared stream plus, per sample, what lies past the stream (the
    length's fill and the cell's question); None when a record has no `stream_tokens` (not nested)."""
    streams = [r["sample"]["measures"].get("stream_tokens") for r in records]
    if any(s is None for s in streams):
        return None
    tails = [r["sample"]["planned_tokens"] - s for r, s in zip(records, streams)]
    return int(max(streams)) + int(sum(tails))


def by_chain(records: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    chains: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        chains[record_chain(record)].append(record)
    return dict(chains)


def prefill(records: Sequence[dict[str, Any]], floor: int | None = None) -> Prefill:
    """The run's figures; the floor from the records' streams (nested), else `floor` as given."""
    answered = [r for r in records if r.get("response")]
    chains = by_chain(records)
    floors = [chain_floor(chain) for chain in chains.values()]
    own = None if any(f is None for f in floors) else sum(f for f in floors if f is not None)
    return Prefill(
        samples=len(answered),
        chains=len(chains),
        sent=sum(r["response"]["prompt_tokens"] or 0 for r in answered),
        cached=sum(r["response"]["cached_tokens"] or 0 for r in answered),
        floor=own if own is not None else floor,
    )
